import BlockAgent
import BlockClient
import BlockCore
import Glibc

// Thin by design: parse, hand off to BlockcRunner, exit with its status.
// SIGPIPE is ignored so that `blockc watch | head -1` ends through a failed write, not a
// signal, and a daemon that closes the socket gives EPIPE.
signal(SIGPIPE, SIG_IGN)
var runner = BlockcRunner.system()
let environment = runner.environment
runner.notifyAgent = { path in NotifyAgent.run(NotifyAgent.Options(socketPath: path, environment: environment)) }
let status: Int32
do {
    status = runner.run(try BlockcInvocation.parse(Array(CommandLine.arguments.dropFirst())))
} catch {
    status = runner.usageError(error)
}
exit(status)
