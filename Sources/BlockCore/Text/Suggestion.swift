/// "Did you mean" for what a configuration file names (§7): a key, a value of a fixed set, an
/// app. Pure: the caller gives the words to choose from.
public enum Suggestion {
    /// The candidate nearest to `word`, compared without regard to case, or nil when none is
    /// near enough to be what was meant:
    /// - the same word in another case (`firewall` for `Firewall`) is nearest of all;
    /// - else the one fewest edits away (a letter added, dropped, changed, or two neighbours
    ///   swapped: `Apss` → `Apps`, `discrod` → `discord`), within 1 edit for a word of up to
    ///   4 letters, 2 up to 8 and 3 beyond, and fewer edits than either word has letters, so a
    ///   short word is never "corrected" into an unrelated one (`x` is not `no`);
    /// - among equally near candidates the first in `candidates` wins: callers list the likelier
    ///   ones first.
    public static func nearest(to word: String, among candidates: [String]) -> String? {
        let typed = Array(word.lowercased())
        guard !typed.isEmpty else { return nil }
        let limit = typed.count <= 4 ? 1 : typed.count <= 8 ? 2 : 3
        var best: (distance: Int, candidate: String)?
        for candidate in candidates {
            let other = Array(candidate.lowercased())
            guard let d = distance(typed, other, atMost: limit), d < typed.count, d < other.count else { continue }
            if best == nil || d < best!.distance { best = (d, candidate) }
        }
        return best?.candidate
    }

    /// The optimal string alignment distance between `a` and `b` (Levenshtein's insertions,
    /// deletions and substitutions, plus swaps of two neighbours), exactly as written (case
    /// counts here); nil once it is certain to be more than `limit`.
    public static func distance(_ a: String, _ b: String, atMost limit: Int = .max) -> Int? {
        distance(Array(a), Array(b), atMost: limit)
    }

    static func distance(_ a: [Character], _ b: [Character], atMost limit: Int) -> Int? {
        if abs(a.count - b.count) > limit { return nil }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var smallest = i
            for j in 1...b.count {
                var d = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d = min(d, before[j - 2] + 1) }
                current[j] = d
                smallest = min(smallest, d)
            }
            if smallest > limit { return nil }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }
}
