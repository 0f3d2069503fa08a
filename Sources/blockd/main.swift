import BlockDaemon
import Foundation

exit(BlockdMain.run(Array(CommandLine.arguments.dropFirst())))
