/// A word on the wire from a set a newer daemon may extend (a `more-time` event's `kind`, an
/// activity's `kind` or `origin`, ...): one this build knows, typed, or the word as sent.
///
/// Read and written through this type only: `init(_:)` gives `known` for every word `Known`
/// spells (its raw value) and `unknown` for any other, kept as it came, so that decoding a
/// newer daemon's word never fails or drops it and `word` writes back the same bytes. Readers
/// switch over it naming every known case and `unknown`, never with `default:`, so that a word
/// added to `Known` stops the compiler at each of them.
public enum WireWord<Known: RawRepresentable & Hashable & Sendable>: Hashable, Sendable where Known.RawValue == String {
    case known(Known)
    /// A word this build does not know (a newer daemon's, or none: an absent key reads as "").
    /// `init(_:)` makes one only for a word `Known` does not spell; a known word is `.known`.
    case unknown(String)

    public init(_ word: String) {
        self = Known(rawValue: word).map(WireWord.known) ?? .unknown(word)
    }

    /// The word as it goes on the wire.
    public var word: String {
        switch self {
        case .known(let known): known.rawValue
        case .unknown(let word): word
        }
    }

    /// The known word, nil for one this build does not know.
    public var known: Known? {
        switch self {
        case .known(let known): known
        case .unknown: nil
        }
    }
}
