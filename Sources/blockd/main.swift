import BlockAgent
import BlockClient
import BlockCore
import BlockDaemon
import Glibc

// The one executable (P1): blockd, blockc and blockc-agent in one file, installed once with the
// other names as symbolic links to it (scripts/install). It runs as the program its name says
// (Program, from argv[0]), each exactly as when they were three executables; under any other
// name it runs nothing and exits 2.
let argv0 = CommandLine.arguments.first ?? ""
let arguments = Array(CommandLine.arguments.dropFirst())
switch Program(argv0: argv0) {
case .blockd:
    exit(BlockdMain.run(arguments))
case .blockc:
    exit(BlockcMain.run(arguments))
case .agent, .nativeHost:
    exit(AgentMain.run(argv0: argv0, arguments: arguments))
case nil:
    let message = Array(Program.unknownName(argv0).utf8)
    _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}
