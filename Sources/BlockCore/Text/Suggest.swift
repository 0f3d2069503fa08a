/// "Did you mean" for names a user mistyped (§6: an unknown selection gets a suggestion).
public enum Suggest {
    /// The candidate closest to `input`, ignoring case: one within an optimal-string-alignment
    /// Damerau–Levenshtein distance of 2 (typos and swapped letters: `instgram`, `redidt`), else
    /// one that `input` is the start of (`insta`). Nil when nothing is plausibly meant, so a
    /// wrong suggestion is never offered for a word that shares almost nothing with it.
    /// Among equally close candidates the first one in `candidates` wins.
    public static func closest(to input: String, among candidates: [String]) -> String? {
        closest(to: input, in: candidates, ordered: true)
    }

    /// The same for candidates in no particular order (a dictionary's keys, as the names of
    /// the activities a `stop` could have meant): among equally close ones the first in name
    /// order wins, so the answer does not depend on the order they come in.
    public static func closest<S: Sequence<String>>(to input: String, amongUnordered candidates: S) -> String? {
        closest(to: input, in: candidates, ordered: false)
    }

    private static func closest<S: Sequence<String>>(to input: String, in candidates: S, ordered: Bool) -> String? {
        let typed = Array(input.lowercased())
        guard !typed.isEmpty else { return nil }
        var best: (score: Int, name: String)?
        for candidate in candidates {
            let name = Array(candidate.lowercased())
            var score: Int?
            let d = distance(typed, name, atMost: 2)
            // Short words are within 2 edits of every other short word; require some overlap.
            if let d, d < typed.count, d < name.count {
                score = d
            } else if typed.count >= 2, name.starts(with: typed) {
                score = 3
            }
            guard let score else { continue }
            // Ties go to the earlier candidate: callers list the likelier names first.
            if best == nil || score < best!.score || (!ordered && score == best!.score && candidate < best!.name) {
                best = (score, candidate)
            }
        }
        return best?.name
    }

    /// Optimal string alignment distance (Levenshtein plus adjacent transpositions), or nil
    /// once it is certain to exceed `limit`: the one function, shared with the configuration's
    /// suggestions (Suggestion.swift).
    static func distance(_ a: [Character], _ b: [Character], atMost limit: Int) -> Int? {
        Suggestion.distance(a, b, atMost: limit)
    }
}
