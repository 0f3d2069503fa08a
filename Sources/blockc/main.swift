import BlockClient
import BlockCore
import Glibc

// Thin by design: parse (against the runner's clock, for --until), hand off to BlockcRunner,
// exit with its status.
// SIGPIPE is ignored so that `blockc watch | head -1` ends through a failed write, not a
// signal, and a daemon that closes the socket gives EPIPE.
// `watch --notify` execs blockc-agent (AgentLauncher): only that executable links libsystemd,
// so no other command pays for loading it.
signal(SIGPIPE, SIG_IGN)
var runner = BlockcRunner.system()
let report = runner.stderr
runner.notifyAgent = { path in AgentLauncher.exec(socketPath: path, stderr: report) }
let status: Int32
do {
    status = runner.run(try BlockcInvocation.parse(Array(CommandLine.arguments.dropFirst()), now: runner.now(), clock: runner.clock))
} catch {
    status = runner.usageError(error)
}
exit(status)
