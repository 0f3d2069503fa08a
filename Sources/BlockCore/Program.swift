/// P1: blockd, blockc and blockc-agent are one executable, installed once with its other names
/// as symbolic links to it. It runs as the program whose name it was started by: the last
/// component of `argv[0]`, exactly (the kernel keeps a symbolic link's own name there). Pure, so
/// that the choice is tested without starting anything.
public enum Program: String, CaseIterable, Sendable {
    /// The daemon (blockd(8)).
    case blockd
    /// The client (blockc(1)).
    case blockc
    /// The notification agent that `blockc watch --notify` runs (S1).
    case agent = "blockc-agent"
    /// The browser extension's native-messaging host (B1), which the browsers' manifests name;
    /// the agent's code, in its host mode.
    case nativeHost = "blockd-nm-host"

    /// The program `argv0` names, or nil for any other name: no prefix, suffix or case is
    /// forgiven, since a copy under another name could be any of them.
    public init?(argv0: String) {
        self.init(rawValue: Program.baseName(argv0))
    }

    /// `argv0`'s last path component ("/usr/bin/blockc" → "blockc").
    public static func baseName(_ argv0: String) -> String {
        argv0.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? ""
    }

    /// What a run under any other name prints on standard error before it exits 2, having run
    /// nothing: what happened and how to start it.
    public static func unknownName(_ argv0: String) -> String {
        let name = baseName(argv0)
        let names = allCases.map(\.rawValue)
        let listed = names.dropLast().joined(separator: ", ") + " or " + names.last!
        let what = name.isEmpty ? "blockd: started without a name (an empty argv[0])" : "\(name): '\(name)' is not a name this program answers to"
        return "\(what): it is blockd, blockc and blockc-agent in one file and runs as the one it is started as (\(listed)); start it by one of those names, for example through a symbolic link named blockc to it, as make install and the package make them\n"
    }
}
