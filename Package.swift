// swift-tools-version:6.0
import PackageDescription

// Layers (see ARCHITECTURE.md): dependencies point down only.
//   cachelog (CLI)  ->  CacheLogKit (the entry point), CacheLogReports  ->  FeedAPI, FeedCache, FeedCacheLog  ->  CacheLog  ->  CLMDB, CZlib, CDeflate
// CacheLog knows nothing of feeds; FeedCache knows nothing of LMDB; FeedAPI knows nothing of caching.
let package = Package(
    name: "CacheLog",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "CacheLog", targets: ["CacheLog"]),
        .library(name: "FeedCache", targets: ["FeedCache"]),
        .library(name: "FeedAPI", targets: ["FeedAPI"]),
        // URLSessionHTTPClient: on Linux it links FoundationNetworking (libcurl and its ~30 shared
        // libraries, mapped at every start), so nothing else in the package imports it.
        .library(name: "FeedAPIURLSession", targets: ["FeedAPIURLSession"]),
        .library(name: "FeedCacheLog", targets: ["FeedCacheLog"]),
        .library(name: "CacheLogReports", targets: ["CacheLogReports"]),
        // The entry point: one object that composes the parts below, with one clock.
        .library(name: "CacheLogKit", targets: ["CacheLogKit"]),
        .executable(name: "cachelog", targets: ["cachelog"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // Counters and timers an app sends to the backend it bootstraps; nothing without one.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
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
        // The payloads' compression: zlib streams, as zlib writes them, in half its time.
        .systemLibrary(
            name: "CDeflate",
            path: "Sources/CDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]
        ),
        .target(
            name: "CacheLog",
            dependencies: ["CLMDB", "CZlib", "CDeflate", "Locking", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "FeedCache",
            dependencies: ["Locking", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "FeedAPI",
            dependencies: ["CCurl", "CZlib", "Locking", .product(name: "Logging", package: "swift-log")]
        ),
        // libcurl's easy interface, loaded with dlopen when CurlHTTPClient first needs it (not
        // linked: a start that does not go to the network maps none of it).
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        .target(name: "FeedAPIURLSession", dependencies: ["FeedAPI", "Locking"]),
        // One lock box for every target that shares a little mutable state across tasks.
        .target(name: "Locking"),
        .target(
            name: "FeedCacheLog",
            dependencies: ["CacheLog", "FeedCache"]
        ),
        // Text for people made from the log: the report page, JSON and key text. It depends on
        // the domain; nothing in the domain depends on it.
        .target(
            name: "CacheLogReports",
            dependencies: ["CacheLog", "FeedCache", "FeedCacheLog"]
        ),
        .target(
            name: "CacheLogKit",
            dependencies: [
                "CacheLog", "FeedAPI", "FeedCache", "FeedCacheLog", "Locking",
                .product(name: "Logging", package: "swift-log"), .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(name: "LoopbackHTTP", dependencies: ["Locking"]),
        .executableTarget(
            name: "cachelog",
            dependencies: [
                "CacheLog", "CacheLogKit", "CacheLogReports", "FeedCache", "FeedAPI", "FeedCacheLog", "LoopbackHTTP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tools/cachelog"
        ),
        // A second process for the multi-process and crash tests: appends events in a loop.
        .executableTarget(
            name: "cachelog-writer",
            dependencies: ["CacheLog", "CacheLogKit", "Locking", "Seeding", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/cachelog-writer"
        ),
        // A reading process for the tests of a reader without the lock file: verifies and replays.
        .executableTarget(name: "cachelog-reader", dependencies: ["CacheLog"], path: "Tools/cachelog-reader"),
        // The process the damage fuzz runs against a damaged database: every call of the public API.
        .executableTarget(name: "cachelog-damage-probe", dependencies: ["CacheLogKit"], path: "Tools/cachelog-damage-probe"),
        // SplitMix64, for the tests and for the writer whose payloads they check.
        .target(name: "Seeding", path: "Tests/Seeding"),
        // Helpers the test targets share (test targets cannot import each other).
        .target(
            name: "TestSupport", dependencies: ["CacheLog", "CLMDB", "CZlib", "Locking", "LoopbackHTTP", "Seeding", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport"),
        .testTarget(name: "CacheLogTests", dependencies: ["CacheLog", "CLMDB", "CZlib", "Seeding", "TestSupport", "cachelog-writer", "cachelog-reader"]),
        .testTarget(
            name: "CacheLogKitTests",
            dependencies: [
                "CacheLogKit", "CacheLogReports", "LoopbackHTTP", "Seeding", "TestSupport", "cachelog", "cachelog-writer",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "FeedCacheTests", dependencies: ["FeedCache", "FeedCacheLog", "CacheLogReports", "CacheLog", "CLMDB", "Locking", "Seeding", "TestSupport"]),
        .testTarget(name: "FeedAPITests", dependencies: ["FeedAPI", "LoopbackHTTP", "TestSupport"]),
        // One spec, run against every HTTPClient the package ships.
        .testTarget(name: "HTTPClientTests", dependencies: ["FeedAPI", "FeedAPIURLSession", "LoopbackHTTP", "TestSupport"]),
        .testTarget(
            name: "AcceptanceTests",
            dependencies: ["CacheLogKit", "FeedAPI", "FeedCache", "FeedCacheLog", "CacheLog", "LoopbackHTTP", "Locking", "TestSupport"]
        ),
        .testTarget(
            name: "CLITests", dependencies: ["cachelog", "cachelog-writer", "CacheLog", "CacheLogReports", "FeedAPI", "FeedCache", "FeedCacheLog", "LoopbackHTTP", "Locking", "TestSupport"],
            // Read by path (see CompatibilityTests), not bundled.
            exclude: ["Fixtures"]),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: [
                "CacheLog", "CLMDB", "CZlib", "FeedAPI", "FeedCache", "FeedCacheLog", "Seeding", "TestSupport", "cachelog", "cachelog-writer",
                "cachelog-damage-probe",
            ]
        ),
    ]
)

// Tools/test's ThreadSanitizer stage builds only the test targets whose suites it runs, named in
// CACHELOG_TEST_TARGETS (comma-separated): instrumenting every suite would cost it minutes.
if let only = Context.environment["CACHELOG_TEST_TARGETS"] {
    let names = Set(only.split(separator: ",").map(String.init))
    package.targets.removeAll { $0.type == .test && !names.contains($0.name) }
}
