/// The languages blockd ships built-in texts for (S6).
public enum Language: String, Sendable, CaseIterable, Hashable {
    case en, ja

    /// The user's language from their locale environment (S6), read by the caller and passed
    /// in because the core does not read the environment.
    ///
    /// POSIX precedence picks the message locale: the first non-empty of `LC_ALL`,
    /// `LC_MESSAGES`, `LANG`. As in GNU gettext, `LANGUAGE` then overrides it unless that
    /// locale is C/POSIX (or unset, which is C): its entries are tried in order and the first
    /// one we have texts for wins, the way gettext skips entries without a catalog.
    /// Anything unrecognised is English.
    public static func from(environment env: [String: String]) -> Language {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { env[$0] }.first { !$0.isEmpty }
        guard let locale, !isCLocale(locale) else { return .en }
        if let list = env["LANGUAGE"] {
            for entry in list.split(separator: ":") {
                if let language = Language(localeName: String(entry)) { return language }
            }
        }
        return Language(localeName: locale) ?? .en
    }

    /// `ja`, `ja_JP`, `ja_JP.UTF-8`, `ja_JP@…` → `.ja`: the part before `_`, `.` or `@`.
    init?(localeName: String) {
        let code = localeName.prefix { $0 != "_" && $0 != "." && $0 != "@" }
        self.init(rawValue: code.lowercased())
    }

    /// `C`, `POSIX` and `C.UTF-8` all mean "no translation"; gettext ignores `LANGUAGE` then.
    static func isCLocale(_ name: String) -> Bool {
        name == "C" || name == "POSIX" || name.hasPrefix("C.") || name.hasPrefix("C@")
    }
}

/// Every text blockd shows (S6). The raw values are the override keys in selection files.
///
/// `{until}` is when the block (or, for `Warning…`, the coming block) ends and `{remaining}`
/// the time left until then; for `Warning…` `{remaining}` is the time until it starts.
public enum TextKey: String, CaseIterable, Sendable, Hashable {
    /// Shield notification for a denied launch of a blocked app.
    case shieldTitle = "ShieldTitle"
    case shieldBody = "ShieldBody"
    /// Label of the notification action that opens the selection's `OpenURL=` (S1, S4).
    case openLabel = "OpenLabel"
    case blockStartedTitle = "BlockStartedTitle"
    case blockStartedBody = "BlockStartedBody"
    case unblockedTitle = "UnblockedTitle"
    case unblockedBody = "UnblockedBody"
    /// A block or limit is about to start.
    case warningTitle = "WarningTitle"
    case warningBody = "WarningBody"
    /// M4: the shield's more-time buttons, shown only when asking can succeed (S4).
    case moreLabel = "MoreLabel"
    case askLabel = "AskLabel"
    case minuteLabel = "MinuteLabel"
    /// M4: the asker's request is waiting; then its answer replaces it (S2).
    case askedTitle = "AskedTitle"
    case askedBody = "AskedBody"
    case grantedTitle = "GrantedTitle"
    case grantedBody = "GrantedBody"
    /// M5: the body of a grant that lifts nothing now, or only part of the selection: another
    /// activity still holds it; `{until}` is when that ends.
    case heldBody = "HeldBody"
    case partHeldBody = "PartHeldBody"
    case deniedTitle = "DeniedTitle"
    case deniedBody = "DeniedBody"
    case expiredTitle = "ExpiredTitle"
    case expiredBody = "ExpiredBody"
    /// M4: an administrator's notification of a request, with Approve and Deny buttons;
    /// `{until}` is when the request expires unanswered.
    case requestTitle = "RequestTitle"
    case requestBody = "RequestBody"
    case approveLabel = "ApproveLabel"
    case denyLabel = "DenyLabel"
}

/// Resolves a text for a selection and language (S6): the override `Key[lang]` for that
/// language, then the plain override `Key`, then the built-in text for the language.
public struct Texts: Sendable, Hashable {
    let overrides: [String: Template]

    /// Built-in texts only.
    public init() {
        overrides = [:]
    }

    /// Parses a selection's `texts`; fails as `validate(overrides:)` does.
    public init(overrides: [String: String]) throws(CoreError) {
        var parsed: [String: Template] = [:]
        for (key, text) in overrides {
            try Texts.checkKey(key)
            do {
                parsed[key] = try Template(text)
            } catch {
                throw CoreError(.invalidConfig, "text \(key): \(error.message)")
            }
        }
        self.overrides = parsed
    }

    /// Checks every key names a known text (optionally `[lang]` for a known language) and
    /// every value parses, so a bad selection file fails when it is loaded (S6).
    public static func validate(overrides: [String: String]) throws(CoreError) {
        _ = try Texts(overrides: overrides)
    }

    public func template(_ key: TextKey, language: Language) -> Template {
        overrides["\(key.rawValue)[\(language.rawValue)]"] ?? overrides[key.rawValue]
            ?? Texts.builtin(key, language: language)
    }

    public func render(_ key: TextKey, language: Language, values: TemplateValues) -> String {
        template(key, language: language).render(values, language: language)
    }

    /// The same resolution straight from a selection's raw `texts`. An override that does
    /// not parse is skipped: it should have been rejected at load, and the built-in text is
    /// better than nothing.
    public static func resolve(_ key: TextKey, language: Language, overrides: [String: String]) -> Template {
        for candidate in ["\(key.rawValue)[\(language.rawValue)]", key.rawValue] {
            if let text = overrides[candidate], let t = try? Template(text) { return t }
        }
        return builtin(key, language: language)
    }

    public static func builtin(_ key: TextKey, language: Language) -> Template {
        do {
            return try Template(builtinText(key, language: language))
        } catch {
            // Our bug, not the user's; the S6 tests parse every built-in text.
            preconditionFailure("built-in text \(key.rawValue)[\(language.rawValue)] does not parse: \(error)")
        }
    }

    /// The shipped wording. Japanese is written as Japanese, not translated word by word.
    public static func builtinText(_ key: TextKey, language: Language) -> String {
        switch (key, language) {
        case (.shieldTitle, .en): "{app} is blocked"
        case (.shieldTitle, .ja): "{app}はブロック中です"
        case (.shieldBody, .en): "Blocked until {until} — {remaining} left."
        case (.shieldBody, .ja): "{until}まで使えません（残り{remaining}）。"
        case (.openLabel, .en): "Open alternative"
        case (.openLabel, .ja): "代わりを開く"
        case (.blockStartedTitle, .en): "{selection} is now blocked"
        case (.blockStartedTitle, .ja): "{selection}のブロックを開始しました"
        case (.blockStartedBody, .en): "Blocked until {until} — {remaining} left."
        case (.blockStartedBody, .ja): "{until}までブロックします（残り{remaining}）。"
        case (.unblockedTitle, .en): "{selection} is unblocked"
        case (.unblockedTitle, .ja): "{selection}のブロックを解除しました"
        case (.unblockedBody, .en): "Its apps and sites are available again."
        case (.unblockedBody, .ja): "アプリとサイトがまた使えるようになりました。"
        case (.warningTitle, .en): "{selection} will be blocked soon"
        case (.warningTitle, .ja): "まもなく{selection}がブロックされます"
        case (.warningBody, .en): "Blocking starts in {remaining}."
        case (.warningBody, .ja): "あと{remaining}でブロックが始まります。"
        case (.moreLabel, .en): "15 more minutes"
        case (.moreLabel, .ja): "あと15分"
        case (.askLabel, .en): "Ask for more time"
        case (.askLabel, .ja): "時間の延長を頼む"
        case (.minuteLabel, .en): "One more minute"
        case (.minuteLabel, .ja): "あと1分"
        case (.askedTitle, .en): "Asked for more time"
        case (.askedTitle, .ja): "時間の延長を頼みました"
        case (.askedBody, .en): "You will be told the answer for {selection}."
        case (.askedBody, .ja): "{selection}についての返事をお知らせします。"
        case (.grantedTitle, .en): "More time for {selection}"
        case (.grantedTitle, .ja): "{selection}の時間が延長されました"
        case (.grantedBody, .en): "Available until {until} — {remaining} left."
        case (.grantedBody, .ja): "{until}まで使えます（残り{remaining}）。"
        case (.heldBody, .en): "It lifts nothing yet: {selection} stays blocked by another activity until {until}."
        case (.heldBody, .ja): "まだ何も解除されません。{selection}は別のブロックにより{until}までブロックされたままです。"
        case (.partHeldBody, .en): "Part of {selection} stays blocked by another activity until {until}."
        case (.partHeldBody, .ja): "{selection}の一部は別のブロックにより{until}までブロックされたままです。"
        case (.deniedTitle, .en): "No more time for {selection}"
        case (.deniedTitle, .ja): "{selection}の延長は認められませんでした"
        case (.deniedBody, .en): "The request was denied."
        case (.deniedBody, .ja): "延長の頼みは断られました。"
        case (.expiredTitle, .en): "No answer about {selection}"
        case (.expiredTitle, .ja): "{selection}の延長に返事がありませんでした"
        case (.expiredBody, .en): "The request for more time expired unanswered."
        case (.expiredBody, .ja): "延長の頼みは返事のないまま期限が切れました。"
        case (.requestTitle, .en): "More time asked for {selection}"
        case (.requestTitle, .ja): "{selection}の延長が頼まれています"
        case (.requestBody, .en): "Answer before {until}, or the request expires."
        case (.requestBody, .ja): "{until}までに答えないと期限が切れます。"
        case (.approveLabel, .en): "Approve"
        case (.approveLabel, .ja): "認める"
        case (.denyLabel, .en): "Deny"
        case (.denyLabel, .ja): "断る"
        }
    }

    static func checkKey(_ key: String) throws(CoreError) {
        let validKeys = TextKey.allCases.map(\.rawValue).joined(separator: ", ")
        let suffixes = Language.allCases.map { "[\($0.rawValue)]" }.joined(separator: " or ")
        var name = Substring(key)
        if name.hasSuffix("]"), let open = name.firstIndex(of: "[") {
            let code = name[name.index(after: open)..<name.index(before: name.endIndex)]
            guard Language(rawValue: String(code)) != nil else {
                let valid = Language.allCases.map(\.rawValue).joined(separator: ", ")
                throw CoreError(.invalidConfig, "text key '\(key)' names unknown language '\(code)'; valid languages are \(valid)")
            }
            name = name[..<open]
        }
        guard TextKey(rawValue: String(name)) != nil else {
            throw CoreError(.invalidConfig, "unknown text key '\(key)'; valid keys are \(validKeys), optionally followed by \(suffixes)")
        }
    }
}
