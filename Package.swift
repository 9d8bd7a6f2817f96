// swift-tools-version:6.0
import PackageDescription

// Layers (see README "Architecture"): dependencies point down only.
//   cachelog (CLI)  ->  FeedAPI, FeedCache, FeedCacheLog  ->  CacheLog  ->  CLMDB, CZlib
// CacheLog knows nothing of feeds; FeedCache knows nothing of LMDB; FeedAPI knows nothing of caching.
let package = Package(
    name: "CacheLog",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "CacheLog", targets: ["CacheLog"]),
        .library(name: "FeedCache", targets: ["FeedCache"]),
        .library(name: "FeedAPI", targets: ["FeedAPI"]),
        .library(name: "FeedCacheLog", targets: ["FeedCacheLog"]),
        .executable(name: "cachelog", targets: ["cachelog"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // Only for `swift package generate-documentation`: a plugin, so nothing of it is linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            path: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "CacheLog",
            dependencies: ["CLMDB", "CZlib", "Locking", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "FeedCache",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "FeedAPI",
            dependencies: ["Locking", .product(name: "Logging", package: "swift-log")]
        ),
        // One lock box for every target that shares a little mutable state across tasks.
        .target(name: "Locking"),
        .target(
            name: "FeedCacheLog",
            dependencies: ["CacheLog", "FeedCache"]
        ),
        .target(name: "LoopbackHTTP"),
        .executableTarget(
            name: "cachelog",
            dependencies: [
                "CacheLog", "FeedCache", "FeedAPI", "FeedCacheLog", "LoopbackHTTP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tools/cachelog"
        ),
        // A second process for the multi-process and crash tests: appends events in a loop.
        .executableTarget(
            name: "cachelog-writer",
            dependencies: ["CacheLog", "Locking", "Seeding", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/cachelog-writer"
        ),
        // SplitMix64, for the tests and for the writer whose payloads they check.
        .target(name: "Seeding", path: "Tests/Seeding"),
        // Helpers the test targets share (test targets cannot import each other).
        .target(name: "TestSupport", dependencies: ["CacheLog", "CLMDB", "Locking", "Seeding"], path: "Tests/TestSupport"),
        .testTarget(name: "CacheLogTests", dependencies: ["CacheLog", "CLMDB", "Seeding", "TestSupport", "cachelog-writer"]),
        .testTarget(name: "FeedCacheTests", dependencies: ["FeedCache", "FeedCacheLog", "CacheLog", "CLMDB", "Locking", "TestSupport"]),
        .testTarget(name: "FeedAPITests", dependencies: ["FeedAPI", "LoopbackHTTP", "TestSupport"]),
        .testTarget(
            name: "AcceptanceTests",
            dependencies: ["FeedAPI", "FeedCache", "FeedCacheLog", "CacheLog", "LoopbackHTTP", "Locking", "TestSupport"]
        ),
        .testTarget(
            name: "CLITests", dependencies: ["cachelog", "cachelog-writer", "CacheLog", "FeedCacheLog", "LoopbackHTTP", "Locking", "TestSupport"],
            // Read by path (see CompatibilityTests), not bundled.
            exclude: ["Fixtures"]),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: ["CacheLog", "CLMDB", "FeedAPI", "FeedCache", "FeedCacheLog", "Seeding", "TestSupport", "cachelog", "cachelog-writer"]
        ),
    ]
)
