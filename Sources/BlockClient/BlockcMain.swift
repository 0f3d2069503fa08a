import BlockCore
import Glibc

/// `blockc`'s entry point: what the one executable (Sources/blockd/main.swift) runs when it is
/// started as `blockc`. Thin by design: parse (against the runner's clock, for --until), hand
/// off to BlockcRunner, return its exit status.
public enum BlockcMain {
    public static func run(_ arguments: [String]) -> Int32 {
        // SIGPIPE is ignored so that `blockc watch | head -1` ends through a failed write, not a
        // signal, and a daemon that closes the socket gives EPIPE.
        signal(SIGPIPE, SIG_IGN)
        var runner = BlockcRunner.system()
        let report = runner.stderr
        // `watch --notify` execs the agent under its own name (AgentLauncher).
        runner.notifyAgent = { path in AgentLauncher.exec(socketPath: path, stderr: report) }
        do {
            return runner.run(try BlockcInvocation.parse(arguments, now: runner.now(), clock: runner.clock))
        } catch {
            return runner.usageError(error, topic: BlockcInvocation.topic(of: arguments))
        }
    }
}
