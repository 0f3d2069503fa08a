extension ConfigFiles {
    public static let selectionSection = "Selection"

    /// S6 text keys a selection may override, each optionally with a language suffix.
    /// Every text the agent shows (S6, M4), so that every key blockd.conf(5) documents parses.
    public static let textKeys = TextKey.allCases.map(\.rawValue)

    /// S6: built-in texts exist in English and Japanese only, so an override for any other
    /// language would never be shown; it is refused rather than silently ignored.
    public static let textLanguages = ["en", "ja"]

    public static let selectionKeys = ["Name", "Domains", "Apps", "Paths", "OpenURL", "ExecOnBlock", "ExecOnUnblock", "Firewall"]

    /// Reads one file of `selections.d/` (§1): a `[Selection]` section with `Name=`
    /// (required), `Domains=`, `Apps=`, `OpenURL=`, `ExecOnBlock=`, `ExecOnUnblock=`, `Firewall=` (E5) and text
    /// overrides such as `ShieldBody=` or `ShieldBody[ja]=`.
    ///
    /// - `Domains=`, `Apps=` and `Paths=` (E8: URL prefixes) are lists of words (`INI.words`:
    ///   space-separated, quotes keep spaces). They may repeat and add up; an empty assignment empties the list so far, as
    ///   in systemd. Duplicates are dropped, first occurrence kept.
    /// - Every other key is single-valued: the last assignment wins, and an empty one unsets.
    /// - A selection with no targets is accepted: it may exist only for its E3 hooks.
    /// - Texts are stored raw (quotes included, as systemd keeps them in `Description=`),
    ///   keyed by the key as written (`ShieldBody[ja]`).
    /// - Whether selection names clash with the built-in catalog is for the caller to check.
    /// - Domains are validated and normalised by `Domain.normalize` (E1), text overrides and
    ///   `OpenURL=` are parsed as templates (S6), so a bad file fails here, at load time.
    public static func parseSelection(file: String, text: String) throws(CoreError) -> Selection {
        let (selection, problems) = readSelection(file: file, text: text)
        if let first = problems.first { throw first.error }
        return selection!
    }

    /// `parseSelection`, with every problem of the file, by line (§7: one run says them all);
    /// nil when there is any.
    public static func readSelection(file: String, text: String) -> (Selection?, [ConfigProblem]) {
        let reader = ConfigReader(file: file, what: "a selection file")
        var list = ProblemList()
        let (doc, malformed) = INIDocument.read(file: file, text: text)
        list.errors = malformed
        let (entries, misplaced) = reader.entries(of: doc, section: selectionSection, problems: &list.errors)
        var selection = Selection(name: "")
        var name: String?
        for e in entries {
            list.check(e) { () throws(CoreError) in
                guard e.key == "Name" else {
                    try readSelectionKey(e, into: &selection, reader: reader)
                    return
                }
                if !e.value.isEmpty { try reader.checked(e) { () throws(CoreError) in try Names.validate(e.value, what: "selection name") } }
                name = e.value.isEmpty ? nil : e.value
            }
        }
        if doc.sections.isEmpty {
            if malformed.isEmpty { list.errors.append(CoreError(.invalidConfig, "\(file): has no [\(selectionSection)] section; a selection file needs one with at least Name=, e.g. [Selection] Name=social")) }
        } else if name == nil, !misplaced, !list.refused.contains("Name") {
            list.errors.append(reader.fail(doc.sections[0].line, "[\(selectionSection)] has no Name=; add one, e.g. Name=social"))
        }
        let problems = list.problems(file: file)
        guard problems.isEmpty, let name else { return (nil, problems) }
        selection.name = name
        selection.domains = Registry.unique(selection.domains)
        selection.apps = Registry.unique(selection.apps)
        selection.paths = Registry.unique(selection.paths)
        if selection.firewall != true { selection.firewall = nil }
        return (selection, [])
    }

    /// One key of a `[Selection]` other than `Name=`. An empty list value clears the list.
    static func readSelectionKey(_ e: INIEntry, into s: inout Selection, reader: ConfigReader) throws(CoreError) {
        let v = e.value
        switch e.key {
        case "Domains":
            if v.isEmpty { s.domains = []; return }
            for word in try reader.words(e) {
                s.domains.append(try reader.checked(e) { () throws(CoreError) in try Domain.normalize(word) })
            }
        case "Apps":
            if v.isEmpty { s.apps = []; return }
            for word in try reader.words(e) { s.apps.append(try reader.app(word, e)) }
        case "Paths":  // E8: URL prefixes, a list like Domains=
            if v.isEmpty { s.paths = []; return }
            for word in try reader.words(e) {
                s.paths.append(try reader.checked(e) { () throws(CoreError) in try URLPrefix.normalize(word) })
            }
        case "OpenURL":
            s.openURL = try v.isEmpty ? nil : reader.url(e)
            if let url = s.openURL {
                try reader.checked(e) { () throws(CoreError) in try PercentEncoding.validate(urlTemplate: url) }
            }
        case "ExecOnBlock":
            s.execOnBlock = try v.isEmpty ? nil : reader.command(e)
        case "ExecOnUnblock":
            s.execOnUnblock = try v.isEmpty ? nil : reader.command(e)
        case "Firewall":
            s.firewall = try v.isEmpty ? nil : reader.boolean(e)
        default:
            guard try reader.isTextKey(e) else {
                throw reader.unknownKey(e, section: selectionSection, valid: selectionKeys + textKeys)
            }
            if v.isEmpty { s.texts[e.key] = nil; return }
            try reader.checked(e) { () throws(CoreError) in try Texts.validate(overrides: [e.key: v]) }
            s.texts[e.key] = v
        }
    }
}

extension ConfigReader {
    /// E2: an app is an absolute path or a bare name looked up in PATH. A relative path with
    /// a '/' would depend on the daemon's working directory, so it is refused.
    func app(_ word: String, _ e: INIEntry) throws(CoreError) -> String {
        let ok: Bool
        if word.first == "/" {
            ok = word.count > 1 && word.last != "/"
        } else {
            ok = !word.isEmpty && !word.contains("/") && word != "." && word != ".."
        }
        guard ok, !word.hasControlCharacters else {
            throw fail(e, "\(e.key)= takes absolute paths (/usr/bin/firefox) or bare executable names looked up in PATH (firefox), not '\(word)'; quote a path that contains spaces")
        }
        return word
    }

    /// S1/S4: the URL is handed to xdg-open, so it needs a scheme (RFC 3986 §3.1) to be
    /// opened as a URL at all; http(s) also needs a host. Whitespace must be percent-encoded.
    func url(_ e: INIEntry) throws(CoreError) -> String {
        let u = e.value
        let accepted = "OpenURL= must be a URL with a scheme, such as https://example.org/ or obsidian://open, not '\(u)'"
        guard !u.hasControlCharacters, !u.contains(" "), let colon = u.firstIndex(of: ":") else {
            throw fail(e, accepted)
        }
        let scheme = u[..<colon]
        guard let first = scheme.unicodeScalars.first, first.isASCIILetter,
              scheme.unicodeScalars.allSatisfy({ $0.isASCIILetter || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) })
        else { throw fail(e, accepted) }
        let lower = scheme.lowercased()
        if lower == "http" || lower == "https" {
            let rest = u[u.index(after: colon)...]
            guard rest.hasPrefix("//"), let host = rest.dropFirst(2).split(separator: "/", omittingEmptySubsequences: false).first,
                  !host.isEmpty else {
                throw fail(e, "OpenURL= '\(u)' has no host; write e.g. \(lower)://example.org/")
            }
        }
        return u
    }

    /// E3 hooks are kept as written; the daemon decides how to run them. Only control
    /// characters are refused (a continued line is already joined into one).
    func command(_ e: INIEntry) throws(CoreError) -> String {
        guard !e.value.hasControlCharacters else {
            throw fail(e, "\(e.key)= must be a command on one line without control characters")
        }
        return e.value
    }

    /// Whether `e.key` is `TextKey` or `TextKey[lang]`; a known text key with a suffix that
    /// is malformed or names an unsupported language is an error, not an unknown key.
    func isTextKey(_ e: INIEntry) throws(CoreError) -> Bool {
        guard let open = e.key.firstIndex(of: "[") else { return ConfigFiles.textKeys.contains(e.key) }
        let base = String(e.key[..<open])
        guard ConfigFiles.textKeys.contains(base) else { return false }
        let langs = ConfigFiles.textLanguages
        let suggestions = langs.map { "\(base)[\($0)]=" }.joined(separator: " or ")
        guard e.key.last == "]", langs.contains(String(e.key[e.key.index(after: open)..<e.key.index(before: e.key.endIndex)])) else {
            throw fail(e, "\(e.key)= names no supported language; write \(suggestions), or \(base)= for every language")
        }
        return true
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
