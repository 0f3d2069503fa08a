// swift-tools-version:6.0
import PackageDescription

// Dependencies point one way (STYLE.md 2): BlockCore (pure) <- BlockDaemon <- executables.
// Only BlockDaemon links the C system libraries.
let package = Package(
    name: "blockd",
    products: [
        .executable(name: "blockd", targets: ["blockd"]),
        .executable(name: "blockc", targets: ["blockc"]),
        .library(name: "BlockCore", targets: ["BlockCore"]),
    ],
    targets: [
        .target(name: "BlockCore"),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .target(name: "BlockDaemon", dependencies: ["BlockCore", "CSystemd"]),
        .executableTarget(name: "blockd", dependencies: ["BlockCore", "BlockDaemon"]),
        .executableTarget(name: "blockc", dependencies: ["BlockCore"]),
        .testTarget(name: "BlockCoreTests", dependencies: ["BlockCore"]),
        .testTarget(name: "BlockDaemonTests", dependencies: ["BlockCore", "BlockDaemon"]),
    ],
    swiftLanguageModes: [.v6]
)
