import BlockDaemon
import Dispatch
import FoundationEssentials
import Glibc

exit(BlockdMain.run(Array(CommandLine.arguments.dropFirst())))
