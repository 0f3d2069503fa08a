/// The names a text or `OpenURL=` template may use (S6). Case-sensitive on purpose: a
/// near miss such as `{App}` is reported at load time rather than guessed at.
public enum Placeholder: String, Sendable, CaseIterable, Hashable {
    case selection, app, until, remaining

    /// `{selection}, {app}, {until}, {remaining}`, for error messages.
    static var list: String { allCases.map { "{\($0.rawValue)}" }.joined(separator: ", ") }
}

/// Values for a template's placeholders, already formatted by the caller: the core has no
/// clock (time is a parameter), so `until` and `remaining` arrive as display strings. `nil` and the
/// empty string both mean "not known" (seed 004 lesson 6: the app name may be missing).
public struct TemplateValues: Sendable, Hashable {
    public var selection: String?
    public var app: String?
    public var until: String?
    public var remaining: String?

    public init(selection: String? = nil, app: String? = nil, until: String? = nil, remaining: String? = nil) {
        self.selection = selection
        self.app = app
        self.until = until
        self.remaining = remaining
    }

    /// The value as given, with empty treated as missing.
    func given(_ p: Placeholder) -> String? {
        let v: String? = switch p {
        case .selection: selection
        case .app: app
        case .until: until
        case .remaining: remaining
        }
        guard let v, !v.isEmpty else { return nil }
        return v
    }
}

/// A notification text with placeholders (S6), parsed once when the configuration is loaded
/// so that a typo is a config error then, not a raw `{placeholder}` in front of the user later.
/// `{{` and `}}` stand for literal braces.
public struct Template: Hashable, Sendable, CustomStringConvertible {
    enum Segment: Hashable, Sendable {
        case literal(String)
        case placeholder(Placeholder)
    }

    let segments: [Segment]
    /// The text as written, for `description` and diagnostics.
    public let source: String

    public init(_ text: String) throws(CoreError) {
        source = text
        segments = try Template.parse(text)
    }

    /// The placeholders this template uses.
    public var placeholders: Set<Placeholder> {
        Set(segments.compactMap { if case .placeholder(let p) = $0 { p } else { nil } })
    }

    public var description: String { source }

    /// The text for people. Every placeholder is replaced (S6): a missing value falls back
    /// (app → selection name → "this app"; see `fallback`) so no `{…}` is ever shown.
    public func render(_ values: TemplateValues, language: Language) -> String {
        render { p in
            switch p {
            case .app: values.given(.app) ?? values.given(.selection) ?? Template.fallback(.app, language)
            default: values.given(p) ?? Template.fallback(p, language)
            }
        }
    }

    /// Substitutes each placeholder with `value(p)`; literal text is copied as written.
    func render(_ value: (Placeholder) -> String) -> String {
        var out = ""
        for segment in segments {
            switch segment {
            case .literal(let s): out += s
            case .placeholder(let p): out += value(p)
            }
        }
        return out
    }

    /// What a missing value reads as. `until`/`remaining` fallbacks are chosen to read well
    /// in the built-in sentences ("Blocked until later — a while left", "あとしばらくで…").
    static func fallback(_ p: Placeholder, _ language: Language) -> String {
        switch (p, language) {
        case (.app, .en): "this app"
        case (.app, .ja): "このアプリ"
        case (.selection, .en): "this selection"
        case (.selection, .ja): "この対象"
        case (.until, .en): "later"
        case (.until, .ja): "解除時刻"
        case (.remaining, .en): "a while"
        case (.remaining, .ja): "しばらく"
        }
    }

    static func parse(_ text: String) throws(CoreError) -> [Segment] {
        func fail(_ why: String) -> CoreError {
            CoreError(.invalidConfig, "\(why) in text '\(text)'; valid placeholders are \(Placeholder.list), and {{ or }} write a literal brace")
        }
        var segments: [Segment] = []
        var literal = ""
        var i = text.startIndex
        while i < text.endIndex {
            let ch = text[i]
            let next = text.index(after: i)
            if ch == "}" {
                guard next < text.endIndex, text[next] == "}" else { throw fail("'}' has no matching '{'") }
                literal.append("}")
                i = text.index(after: next)
                continue
            }
            guard ch == "{" else {
                literal.append(ch)
                i = next
                continue
            }
            if next < text.endIndex, text[next] == "{" {
                literal.append("{")
                i = text.index(after: next)
                continue
            }
            guard let close = text[next...].firstIndex(of: "}") else {
                throw fail("'{' is never closed")
            }
            let name = String(text[next..<close])
            guard let p = Placeholder(rawValue: name) else {
                throw fail("unknown placeholder '{\(name)}'")
            }
            if !literal.isEmpty { segments.append(.literal(literal)) }
            literal = ""
            segments.append(.placeholder(p))
            i = text.index(after: close)
        }
        if !literal.isEmpty { segments.append(.literal(literal)) }
        return segments
    }
}
