import Testing
@testable import BlockCore

/// S6: texts are templates; missing values fall back; no raw placeholder reaches the user;
/// unknown placeholders fail at load; built-in English and Japanese chosen by locale.
@Suite struct TemplateTests {
    static let everyBuiltin: [(TextKey, Language)] =
        TextKey.allCases.flatMap { k in Language.allCases.map { (k, $0) } }

    @Test("S6: every built-in text renders with all values missing and no brace left", arguments: everyBuiltin)
    func builtinWithoutValues(key: TextKey, language: Language) {
        let text = Texts.builtin(key, language: language).render(TemplateValues(), language: language)
        #expect(!text.isEmpty)
        #expect(!text.contains("{") && !text.contains("}"), "\(key)[\(language)]: \(text)")
    }

    @Test("S6: built-in texts render with full values", arguments: [
        (TextKey.shieldTitle, Language.en, "Instagram is blocked"),
        (.shieldTitle, .ja, "Instagramはブロック中です"),
        (.shieldBody, .en, "Blocked until 22:00 — 1h 5m left."),
        (.shieldBody, .ja, "22:00まで使えません（残り1h 5m）。"),
        (.blockStartedTitle, .en, "Social is now blocked"),
        (.warningBody, .ja, "あと1h 5mでブロックが始まります。"),
    ])
    func builtinWithValues(key: TextKey, language: Language, expected: String) {
        let values = TemplateValues(selection: "Social", app: "Instagram", until: "22:00", remaining: "1h 5m")
        #expect(Texts().render(key, language: language, values: values) == expected)
    }

    @Test("S6: a missing app falls back to the selection name, then to 'this app'", arguments: [
        (TemplateValues(selection: "Social", app: "Instagram"), Language.en, "Instagram is blocked"),
        (TemplateValues(selection: "Social"), .en, "Social is blocked"),
        (TemplateValues(selection: "Social", app: ""), .en, "Social is blocked"),
        (TemplateValues(), .en, "this app is blocked"),
        (TemplateValues(selection: ""), .en, "this app is blocked"),
        (TemplateValues(selection: "SNS"), .ja, "SNSはブロック中です"),
        (TemplateValues(), .ja, "このアプリはブロック中です"),
    ])
    func appFallback(values: TemplateValues, language: Language, expected: String) {
        #expect(Texts.builtin(.shieldTitle, language: language).render(values, language: language) == expected)
    }

    @Test("S6: missing selection, until and remaining read as localized phrases", arguments: [
        ("{selection}|{until}|{remaining}", Language.en, "this selection|later|a while"),
        ("{selection}|{until}|{remaining}", .ja, "この対象|解除時刻|しばらく"),
    ])
    func otherFallbacks(text: String, language: Language, expected: String) throws {
        #expect(try Template(text).render(TemplateValues(), language: language) == expected)
    }

    @Test("S6: {{ and }} are literal braces; values are inserted once, never re-expanded", arguments: [
        ("{{app}} is {app}", TemplateValues(app: "X"), "{app} is X"),
        ("}}{{", TemplateValues(), "}{"),
        ("{app}", TemplateValues(app: "{selection}"), "{selection}"),
        ("", TemplateValues(), ""),
        ("no placeholders", TemplateValues(), "no placeholders"),
    ])
    func literalBraces(text: String, values: TemplateValues, expected: String) throws {
        #expect(try Template(text).render(values, language: .en) == expected)
    }

    @Test("S6: an unknown placeholder, an unclosed { or a stray } is a config error at load", arguments: [
        ("{foo} is blocked", "unknown placeholder '{foo}'"),
        ("{App} is blocked", "unknown placeholder '{App}'"),
        ("{} is blocked", "unknown placeholder '{}'"),
        ("{app is blocked", "'{' is never closed"),
        ("app} is blocked", "'}' has no matching '{'"),
        ("{app}}", "'}' has no matching '{'"),
    ])
    func rejected(text: String, why: String) {
        do {
            _ = try Template(text)
            Issue.record("'\(text)' parsed")
        } catch {
            #expect(error.code == .invalidConfig)
            #expect(error.message.contains(why), "\(error.message)")
            #expect(error.message.contains("{selection}, {app}, {until}, {remaining}"))
        }
    }

    @Test("S6: a [ja] override is used for Japanese only; a plain override for both", arguments: [
        (Language.ja, "日本語: SNS"),
        (.en, "Plain: SNS"),
    ])
    func overridePrecedence(language: Language, expected: String) throws {
        let texts = try Texts(overrides: ["ShieldTitle": "Plain: {selection}", "ShieldTitle[ja]": "日本語: {selection}"])
        let values = TemplateValues(selection: "SNS")
        #expect(texts.render(.shieldTitle, language: language, values: values) == expected)
        let raw = ["ShieldTitle": "Plain: {selection}", "ShieldTitle[ja]": "日本語: {selection}"]
        #expect(Texts.resolve(.shieldTitle, language: language, overrides: raw).render(values, language: language) == expected)
    }

    @Test("S6: with only a [ja] override, English keeps the built-in text")
    func jaOnlyOverride() throws {
        let texts = try Texts(overrides: ["ShieldBody[ja]": "{until}までおあずけ"])
        #expect(texts.template(.shieldBody, language: .en) == Texts.builtin(.shieldBody, language: .en))
        #expect(texts.render(.shieldBody, language: .ja, values: TemplateValues(until: "7:00")) == "7:00までおあずけ")
    }

    @Test("S6: selection text overrides are checked at load", arguments: [
        (["ShieldBody": "ok {app}", "OpenLabel[en]": "Go"], nil),
        (["ShieldBdy": "x"], "unknown text key 'ShieldBdy'"),
        (["ShieldBody[fr]": "x"], "unknown language 'fr'"),
        (["ShieldBody[]": "x"], "unknown language ''"),
        (["ShieldBody": "{foo}"], "text ShieldBody: unknown placeholder '{foo}'"),
        (["WarningBody[ja]": "あと{remaining"], "text WarningBody[ja]: '{' is never closed"),
    ] as [([String: String], String?)])
    func validateOverrides(overrides: [String: String], why: String?) {
        do {
            try Texts.validate(overrides: overrides)
            #expect(why == nil)
        } catch {
            #expect(error.code == .invalidConfig)
            #expect(why.map { error.message.contains($0) } == true, "\(error.message)")
        }
    }

    @Test("S6: the language follows POSIX locale precedence, with GNU LANGUAGE", arguments: [
        (["LC_ALL": "C", "LANG": "ja_JP.UTF-8"], Language.en),  // LC_ALL wins
        (["LANG": "ja_JP.UTF-8"], .ja),
        ([:], .en),
        (["LANG": "ja"], .ja),
        (["LANG": "en_US.UTF-8"], .en),
        (["LANG": "de_DE.UTF-8"], .en),
        (["LC_MESSAGES": "ja_JP.eucJP", "LANG": "en_US.UTF-8"], .ja),
        (["LC_ALL": "", "LC_MESSAGES": "ja_JP.UTF-8"], .ja),  // empty means unset
        (["LC_ALL": "en_US.UTF-8", "LC_MESSAGES": "ja_JP.UTF-8"], .en),
        (["LANG": "en_US.UTF-8", "LANGUAGE": "ja:en"], .ja),
        (["LANG": "ja_JP.UTF-8", "LANGUAGE": "de:en"], .en),  // first entry we have texts for
        (["LANG": "C", "LANGUAGE": "ja"], .en),  // gettext ignores LANGUAGE in the C locale
        (["LANG": "C.UTF-8", "LANGUAGE": "ja"], .en),
        (["LANGUAGE": "ja"], .en),  // unset locale is C
        (["LANG": "POSIX"], .en),
        (["LANG": "ja_JP@cjknarrow"], .ja),
    ])
    func language(env: [String: String], expected: Language) {
        #expect(Language.from(environment: env) == expected)
    }
}
