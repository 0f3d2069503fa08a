// swift-tools-version:6.0
import PackageDescription

// Dependencies point one way (docs §11): BlockCore (pure) <- BlockDaemon <- executables.
// Only BlockDaemon links the kernel shims (CLinux); CSystemd is linked by BlockDaemon and by
// BlockAgent, the user-session notification agent, which needs sd-bus (S1). BlockAgent has
// its own executable, blockc-agent, which `blockc watch --notify` execs: blockc itself does
// not link libsystemd, so no other command pays for loading it.
// Every executable links the Swift runtime, Dispatch and Foundation statically, in debug builds
// too (Tests/BlockDaemonTests/SelfContainedTests.swift runs the debug binaries with /opt/swift
// hidden): an installed binary loads nothing from the toolchain, only Debian's own libraries
// (libc, libstdc++, libsystemd, libnftables), which the package depends on. Loading and
// relocating twenty shared Swift libraries was also most of a `blockc status` (8 ms of CPU
// against redis-cli's 3 ms); static, it starts like a C client. The cost is disk: each binary
// carries its own copy of Foundation, most of it ICU and its data (about 58 of the 60 MB of
// each stripped binary; README, Install, has the sizes). Zone rules come from that ICU data, as
// they came from the toolchain's shared ICU library before (/usr/share/zoneinfo is not read).
// -z now: every symbol bound at start and the GOT then read-only (full RELRO), as Debian's
// hardening flags do; the few dynamic symbols left (libc, libstdc++, libsystemd) cost nothing.
let staticStdlib = (swift: [SwiftSetting.unsafeFlags(["-static-stdlib"])],
                    linker: [LinkerSetting.unsafeFlags(["-static-stdlib", "-Xlinker", "-z", "-Xlinker", "now"])])

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
        .target(name: "BlockDaemon", dependencies: ["BlockCore", "CSystemd", "CLinux", "CNftables"]),
        .executableTarget(name: "blockd", dependencies: ["BlockCore", "BlockDaemon"],
                          swiftSettings: staticStdlib.swift, linkerSettings: staticStdlib.linker),
        .target(name: "BlockClient", dependencies: ["BlockCore"]),
        .target(name: "BlockAgent", dependencies: ["BlockCore", "BlockClient", "CSystemd"]),
        .executableTarget(name: "blockc", dependencies: ["BlockCore", "BlockClient"],
                          swiftSettings: staticStdlib.swift, linkerSettings: staticStdlib.linker),
        .executableTarget(name: "blockc-agent", dependencies: ["BlockCore", "BlockClient", "BlockAgent"],
                          swiftSettings: staticStdlib.swift, linkerSettings: staticStdlib.linker),
        // Test doubles (manual clock, memory log, recording enforcer, unsupplied collaborators):
        // only test targets depend on it.
        .target(name: "BlockTestSupport", dependencies: ["BlockCore", "BlockDaemon"], path: "Tests/Support"),
        .testTarget(name: "BlockCoreTests", dependencies: ["BlockCore"]),
        .testTarget(name: "BlockDaemonTests", dependencies: ["BlockCore", "BlockDaemon", "BlockClient", "BlockTestSupport"]),
        .testTarget(name: "BlockClientTests", dependencies: ["BlockCore", "BlockClient"]),
        .testTarget(name: "BlockAgentTests", dependencies: ["BlockCore", "BlockClient", "BlockAgent"]),
    ],
    swiftLanguageModes: [.v6]
)
