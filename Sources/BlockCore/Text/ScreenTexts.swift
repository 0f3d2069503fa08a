/// Screen time's warning before a screen-time limit is used up or allowed hours begin, in the
/// person's language: what happens to their sessions, and when ({remaining}). It has no
/// selection, so there is nothing in `selections.d` to override these with (S6's texts are per
/// selection).
public enum ScreenTexts {
    public static func title(_ language: Language) -> Template {
        parsed(language == .ja ? "まもなく画面の時間が終わります" : "Time at the screen ends soon")
    }

    public static func body(_ action: SessionAction, _ language: Language) -> Template {
        let text: String = switch (action, language) {
        case (.lock, .en): "Your screen locks in {remaining}."
        case (.lock, .ja): "あと{remaining}で画面がロックされます。"
        case (.logout, .en): "You will be logged out in {remaining}: save your work."
        case (.logout, .ja): "あと{remaining}でログアウトされます。作業を保存してください。"
        case (.suspend, .en): "The computer goes to sleep in {remaining}: save your work."
        case (.suspend, .ja): "あと{remaining}でコンピューターがスリープします。作業を保存してください。"
        case (.poweroff, .en): "The computer shuts down in {remaining}: save your work."
        case (.poweroff, .ja): "あと{remaining}でコンピューターの電源が切れます。作業を保存してください。"
        }
        return parsed(text)
    }

    static func parsed(_ text: String) -> Template {
        do {
            return try Template(text)
        } catch {
            preconditionFailure("built-in screen-time text '\(text)' does not parse: \(error)")  // ScreenTextsTests parse each
        }
    }
}
