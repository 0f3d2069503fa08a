// swift-tools-version:6.0
import PackageDescription

// Dependencies point one way (docs §11): BlockCore (pure) <- BlockDaemon, BlockClient <- BlockAgent
// <- the executable. Only BlockDaemon uses the kernel shims (CLinux) and libnftables (CNftables);
// CSystemd is used by BlockDaemon and by BlockAgent, the user-session notification agent, and
// through BlockBus (sd-bus) by both: the agent's notifications (S1), the daemon's logind sessions.
//
// One executable, three names (P1): blockd, blockc and blockc-agent are one program, the target
// `blockd` (Sources/blockd/main.swift), which runs as the one its argv[0] names (BlockCore's
// Program). Installed, it is one file, $(PREFIX)/bin/blockd, and blockc, blockc-agent and
// blockd-nm-host are symbolic links to it (scripts/install): the static Swift runtime below is
// carried once, not three times (17.6 MiB installed, where three executables made 48.8 MiB).
// SwiftPM links the one target as three products, so a plain `swift build` (and `swift test`,
// which no make step precedes) leaves blockd, blockc and blockc-agent in .build/<config>/ as
// before: byte for byte the same program under three names, which the tests, the torture
// suite and the benchmarks run by name. make install and make deb take only `blockd` and make
// the links; MultiCallTests runs the built blockd through links named as installed, and
// InstallTests and torture/deb.py run the installed links themselves.
// Every name contains what blockd links, so libsystemd and libnftables are loaded when first
// called rather than at start (CSystemd, CNftables below): blockc, which calls neither, starts
// as it did when it was an executable of its own (docs/BENCHMARKS.md has the figures).
//
// The executable links the Swift runtime, Dispatch and FoundationEssentials statically, in
// debug builds too (Tests/BlockMetaTests/SelfContainedTests.swift runs the debug binaries with
// /opt/swift hidden): installed, it loads nothing from the toolchain, only Debian's own
// libraries (libc, libstdc++ at start; libsystemd and libnftables when called), which the
// package depends on. Loading and relocating twenty shared Swift libraries was also most of a
// `blockc status`; static, it starts like a C client. Nothing imports Foundation itself (its
// other half is ICU, 34 MB of data in each binary): FoundationEssentials has what blockd needs,
// zone rules come from the system's tzdata (Sources/ZoneInfo), and NFKC from a generated table
// (scripts/gen-nfkc.swift).
// Linked by the toolchain's lld:
// -z pack-relative-relocs: the ~37,000 relative relocations of a static Swift runtime in a PIE
//   take 880 KB as RELA entries and 7 KB as RELR (DT_RELR, glibc 2.36 and later; Debian 12).
// --icf=safe: identical functions whose address is never taken are kept once.
// -z now: every symbol bound at start and the GOT then read-only (full RELRO), as Debian's
//   hardening flags do; the few dynamic symbols left (libc, libstdc++) cost nothing.
// docs/SHIPPING.md has the sizes.
let staticStdlib = (swift: [SwiftSetting.unsafeFlags(["-static-stdlib"])],
                    linker: [LinkerSetting.unsafeFlags(["-static-stdlib", "-use-ld=lld",
                                                        "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                                                        "-Xlinker", "--icf=safe",
                                                        "-Xlinker", "-z", "-Xlinker", "now"])])

let package = Package(
    name: "blockd",
    products: [
        // One target, linked under each name (see above); only blockd is installed.
        .executable(name: "blockd", targets: ["blockd"]),
        .executable(name: "blockc", targets: ["blockd"]),
        .executable(name: "blockc-agent", targets: ["blockd"]),
        .library(name: "BlockCore", targets: ["BlockCore"]),
    ],
    targets: [
        .target(name: "BlockCore"),
        // libsystemd and libnftables (their headers from libsystemd-dev and libnftables-dev), loaded
        // when first called rather than at start (Sources/CSystemd/CSystemd.c says how): blockc
        // calls neither, and loading them with the six and five libraries behind them made every
        // blockc start 40% slower once blockc became blockd's other name. Not linked, so
        // dpkg-shlibdeps cannot see them: debian/control.in names both.
        .target(name: "CSystemd", cSettings: [.define("_FORTIFY_SOURCE", to: "2", .when(configuration: .release))]),
        .target(name: "CNftables", cSettings: [.define("_FORTIFY_SOURCE", to: "2", .when(configuration: .release))]),
        // _FORTIFY_SOURCE (release only: it needs optimization): the kernel shims' reads and
        // copies into fixed buffers are bounds-checked at run time, as Debian builds C code.
        .target(name: "CLinux", cSettings: [.define("_FORTIFY_SOURCE", to: "2", .when(configuration: .release))]),
        // The system's time zone from tzdata's files: the daemon, blockc and the agent all need it.
        .target(name: "ZoneInfo", dependencies: ["BlockCore"]),
        // D-Bus through sd-bus: the agent's notifications and logind hints, the daemon's logind sessions.
        .target(name: "BlockBus", dependencies: ["CSystemd"]),
        .target(name: "BlockDaemon", dependencies: ["BlockCore", "ZoneInfo", "BlockBus", "CSystemd", "CLinux", "CNftables"]),
        .target(name: "BlockClient", dependencies: ["BlockCore", "ZoneInfo"]),
        .target(name: "BlockAgent", dependencies: ["BlockCore", "BlockClient", "ZoneInfo", "BlockBus", "CSystemd"]),
        // The one executable: blockd, blockc and blockc-agent by the name it is run as.
        .executableTarget(name: "blockd", dependencies: ["BlockCore", "BlockDaemon", "BlockClient", "BlockAgent"],
                          swiftSettings: staticStdlib.swift, linkerSettings: staticStdlib.linker),
        // Test doubles (manual clock, memory log, recording enforcer, unsupplied collaborators):
        // only test targets depend on it.
        .target(name: "BlockTestSupport", dependencies: ["BlockCore", "BlockDaemon", "BlockTestTools"], path: "Tests/Support"),
        // Running programs and waiting with a deadline, for every integration test target.
        .target(name: "BlockTestTools", path: "Tests/Tools"),
        .testTarget(name: "BlockCoreTests", dependencies: ["BlockCore", "ZoneInfo"]),
        .testTarget(name: "BlockDaemonTests", dependencies: ["BlockCore", "ZoneInfo", "BlockDaemon", "BlockClient", "BlockTestSupport", "BlockTestTools"]),
        .testTarget(name: "BlockClientTests", dependencies: ["BlockCore", "ZoneInfo", "BlockClient"]),
        .testTarget(name: "BlockAgentTests", dependencies: ["BlockCore", "ZoneInfo", "BlockClient", "BlockAgent", "BlockTestTools"]),
        // Tests about the repository rather than the code: docs, man pages, completions, the
        // installed files (those run the built binaries, in BlockTestSupport's sandbox).
        .testTarget(name: "BlockMetaTests", dependencies: ["BlockCore", "BlockDaemon", "BlockClient", "BlockTestSupport", "BlockTestTools"]),
    ],
    swiftLanguageModes: [.v6]
)
