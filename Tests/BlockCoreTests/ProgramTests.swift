import Testing
import BlockCore

/// P1: blockd, blockc and blockc-agent are one executable, which runs as the program whose name
/// it was started by (the last component of argv[0]), and as nothing under any other name.
@Suite("P1: one executable, run as the program its name says")
struct ProgramTests {
    @Test("P1: argv[0]'s last component picks the program: the installed links, the build tree's names, a bare name", arguments: [
        ("/usr/bin/blockd", Program.blockd),
        ("blockd", .blockd),
        ("/usr/bin/blockc", .blockc),
        ("/usr/local/bin/blockc", .blockc),
        ("blockc", .blockc),
        ("/work/.build/debug/blockc", .blockc),
        ("/usr/libexec/blockd/blockc-agent", .agent),
        ("blockc-agent", .agent),
        ("/usr/libexec/blockd/blockd-nm-host", .nativeHost),
        ("./blockd-nm-host", .nativeHost),
        ("/opt//blockd//blockc", .blockc),
    ])
    func byName(argv0: String, program: Program) {
        #expect(Program(argv0: argv0) == program)
    }

    @Test("P1: any other name is none of them: no prefix, suffix or case is forgiven", arguments: [
        "", "/", "foo", "/usr/bin/foo", "Blockc", "BLOCKD", "blockc.old", "blockc-agent2", "-blockc", "blockd-multi",
        "/usr/bin/blockc ", "blockc/x", "busybox",
    ])
    func otherNames(argv0: String) {
        #expect(Program(argv0: argv0) == nil, "\(argv0)")
    }

    @Test("P1: the four names, as installed and as the native-messaging manifests give the host's")
    func names() {
        #expect(Program.allCases.map(\.rawValue) == ["blockd", "blockc", "blockc-agent", "blockd-nm-host"])
    }

    @Test("P1: under another name it says so, names the names it answers to and how to start it by one")
    func unknownName() {
        #expect(Program.unknownName("/tmp/foo") == "foo: 'foo' is not a name this program answers to: it is blockd, blockc and blockc-agent in one file and runs as the one it is started as (blockd, blockc, blockc-agent or blockd-nm-host); start it by one of those names, for example through a symbolic link named blockc to it, as make install and the package make them\n")
        #expect(Program.unknownName("").hasPrefix("blockd: started without a name (an empty argv[0]): it is blockd, blockc and blockc-agent in one file"))
    }
}
