// swift-tools-version:6.0
import PackageDescription

// Dependencies point one way (docs §11): BlockCore (pure) <- BlockDaemon <- executables.
// Only BlockDaemon links the kernel shims (CLinux); CSystemd is linked by BlockDaemon and by
// BlockAgent, the user-session notification agent, which needs sd-bus (S1). BlockAgent has
// its own executable, blockc-agent, which `blockc watch --notify` execs: blockc itself does
// not link libsystemd, so no other command pays for loading it.
// Every executable links the Swift runtime, Dispatch and FoundationEssentials statically, in
// debug builds too (Tests/BlockDaemonTests/SelfContainedTests.swift runs the debug binaries with
// /opt/swift hidden): an installed binary loads nothing from the toolchain, only Debian's own
// libraries (libc, libstdc++, libsystemd, libnftables), which the package depends on. Loading
// and relocating twenty shared Swift libraries was also most of a `blockc status`; static, it
// starts like a C client. Nothing imports Foundation itself (its other half is ICU, 34 MB of
// data in each binary): FoundationEssentials has what blockd needs, zone rules come from the
// system's tzdata (Sources/ZoneInfo), and NFKC from a generated table (scripts/gen-nfkc.swift).
// Linked by the toolchain's lld:
// -z pack-relative-relocs: the ~37,000 relative relocations of a static Swift runtime in a PIE
//   take 880 KB as RELA entries and 7 KB as RELR (DT_RELR, glibc 2.36 and later; Debian 12).
// --icf=safe: identical functions whose address is never taken are kept once.
// -z now: every symbol bound at start and the GOT then read-only (full RELRO), as Debian's
//   hardening flags do; the few dynamic symbols left (libc, libstdc++, libsystemd) cost nothing.
// README, Install, has the sizes.
let staticStdlib = (swift: [SwiftSetting.unsafeFlags(["-static-stdlib"])],
                    linker: [LinkerSetting.unsafeFlags(["-static-stdlib", "-use-ld=lld",
                                                        "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                                                        "-Xlinker", "--icf=safe",
                                                        "-Xlinker", "-z", "-Xlinker", "now"])])

let package = Package(
    name: "blockd",
    products: [
        .executable(name: "blockd", targets: ["blockd"]),
        .executable(name: "blockc", targets: ["blockc"]),
        .executable(name: "blockc-agent", targets: ["blockc-agent"]),
        .library(name: "BlockCore", targets: ["BlockCore"]),
    ],
    targets: [
        .target(name: "BlockCore"),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .systemLibrary(
            name: "CNftables",
            pkgConfig: "libnftables",
            providers: [.apt(["libnftables-dev"])]
        ),
        // _FORTIFY_SOURCE (release only: it needs optimization): the kernel shims' reads and
        // copies into fixed buffers are bounds-checked at run time, as Debian builds C code.
        .target(name: "CLinux", cSettings: [.define("_FORTIFY_SOURCE", to: "2", .when(configuration: .release))]),
        // The system's time zone from tzdata's files: the daemon, blockc and the agent all need it.
        .target(name: "ZoneInfo", dependencies: ["BlockCore"]),
        .target(name: "BlockDaemon", dependencies: ["BlockCore", "ZoneInfo", "CSystemd", "CLinux", "CNftables"]),
        .executableTarget(name: "blockd", dependencies: ["BlockCore", "BlockDaemon"],
                          swiftSettings: staticStdlib.swift, linkerSettings: staticStdlib.linker),
        .target(name: "BlockClient", dependencies: ["BlockCore", "ZoneInfo"]),
        .target(name: "BlockAgent", dependencies: ["BlockCore", "BlockClient", "ZoneInfo", "CSystemd"]),
        .executableTarget(name: "blockc", dependencies: ["BlockCore", "BlockClient"],
                          swiftSettings: staticStdlib.swift, linkerSettings: staticStdlib.linker),
        .executableTarget(name: "blockc-agent", dependencies: ["BlockCore", "BlockClient", "BlockAgent"],
                          swiftSettings: staticStdlib.swift, linkerSettings: staticStdlib.linker),
        // Test doubles (manual clock, memory log, recording enforcer, unsupplied collaborators):
        // only test targets depend on it.
        .target(name: "BlockTestSupport", dependencies: ["BlockCore", "BlockDaemon"], path: "Tests/Support"),
        // Running programs and waiting with a deadline, for every integration test target.
        .target(name: "BlockTestTools", path: "Tests/Tools"),
        .testTarget(name: "BlockCoreTests", dependencies: ["BlockCore", "ZoneInfo"]),
        .testTarget(name: "BlockDaemonTests", dependencies: ["BlockCore", "ZoneInfo", "BlockDaemon", "BlockClient", "BlockTestSupport", "BlockTestTools"]),
        .testTarget(name: "BlockClientTests", dependencies: ["BlockCore", "ZoneInfo", "BlockClient"]),
        .testTarget(name: "BlockAgentTests", dependencies: ["BlockCore", "ZoneInfo", "BlockClient", "BlockAgent", "BlockTestTools"]),
    ],
    swiftLanguageModes: [.v6]
)
