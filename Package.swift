// swift-tools-version:6.0
import PackageDescription

// Dependencies point one way (docs §11): BlockCore (pure) <- BlockDaemon <- executables.
// Only BlockDaemon links the kernel shims (CLinux); CSystemd is linked by BlockDaemon and by
// BlockAgent, the user-session notification agent, which needs sd-bus (S1). BlockAgent has
// its own executable, blockc-agent, which `blockc watch --notify` execs: blockc itself does
// not link libsystemd, so no other command pays for loading it.
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
        .target(name: "CLinux"),
        .target(name: "BlockDaemon", dependencies: ["BlockCore", "CSystemd", "CLinux", "CNftables"]),
        .executableTarget(name: "blockd", dependencies: ["BlockCore", "BlockDaemon"]),
        .target(name: "BlockClient", dependencies: ["BlockCore"]),
        .target(name: "BlockAgent", dependencies: ["BlockCore", "BlockClient", "CSystemd"]),
        // The Swift runtime and Foundation linked statically: loading and relocating their
        // twenty shared libraries was most of a `blockc status` (8 ms of CPU against redis-cli's
        // 3 ms); static, it starts like a C client. Costs ~70 MB of disk, most of it ICU data.
        .executableTarget(name: "blockc", dependencies: ["BlockCore", "BlockClient"],
                          swiftSettings: [.unsafeFlags(["-static-stdlib"])], linkerSettings: [.unsafeFlags(["-static-stdlib"])]),
        .executableTarget(name: "blockc-agent", dependencies: ["BlockCore", "BlockClient", "BlockAgent"]),
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
