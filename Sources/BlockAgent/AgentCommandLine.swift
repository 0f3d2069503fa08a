import BlockCore

/// What `blockc-agent` was started as: the notification agent (blockc's `watch --notify`), the
/// browser extension's native-messaging host (B1), or asked for its help or version. Pure, so
/// that the choice is tested without starting either.
public enum AgentCommandLine {
    /// The name the native-messaging manifests point at: a symlink to blockc-agent.
    public static let hostName = Program.nativeHost.rawValue

    public enum Mode: Equatable, Sendable {
        case help
        case version
        /// The host, with what the browser passed (its origin, or a manifest path and an ID).
        case nativeHost(caller: [String])
        /// blockc's arguments, of which only `watch --notify` runs here.
        case agent([String])
    }

    /// `argv0` is the name it was run by; `arguments` what follows it. The browsers pass the
    /// host arguments of their own, so under the host's name nothing is an option but a first
    /// `--help` or `--version`, which no browser sends.
    public static func mode(argv0: String, arguments: [String]) -> Mode {
        switch arguments.first {
        case "--help", "-h": return .help
        case "--version": return .version
        case "--native-host": return .nativeHost(caller: Array(arguments.dropFirst()))
        default: break
        }
        let name = argv0.split(separator: "/").last.map(String.init) ?? argv0
        return name == hostName ? .nativeHost(caller: arguments) : .agent(arguments)
    }

    public static let version = "blockc-agent \(BlockdVersion.version)\n"

    public static let help = """
        usage: blockc-agent --socket PATH watch --notify
               blockc-agent --native-host [BROWSER-ARGUMENTS...]
               blockd-nm-host [BROWSER-ARGUMENTS...]
               blockc-agent --help | --version

        blockd's agent in a user's session; not a command to type.

          --socket PATH watch --notify
              the notification agent, which 'blockc watch --notify' runs (blockc(1)).
          --native-host, or run as blockd-nm-host
              the native-messaging host of blockd's browser extension: the browser starts it
              from its native-messaging manifest, passing arguments of its own (ignored), and
              exchanges length-prefixed JSON messages with it on stdin and stdout. It reports
              the site in the focused tab to blockd as the browser's user and tells the
              extension what is blocked for that user. The socket is $BLOCKD_SOCKET, else
              /run/blockd/blockd.sock. It exits 0 when the browser closes stdin.

        """
}
