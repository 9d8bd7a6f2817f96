// swift-tools-version: 6.1
import PackageDescription

// The CacheLog benchmarks: a package of its own, so that package-benchmark and GRDB never enter
// the library's dependency graph. Run everything with `Tools/bench` from the repository root.
//
//   bench-compare          one table: CacheLog beside the hand-written C path, a JSON file store
//                          and SQLite (GRDB), measured side by side in one run
//   CacheLogBenchmarks     the same operations under ordo-one's package-benchmark (wall clock, mallocs,
//                          instructions): `swift package benchmark` in this directory
//   CPath                  the limit: the same work written in C against liblmdb, libdeflate and zlib
let package = Package(
    name: "CacheLogBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "CacheLog", path: "../.."),
        // Only the malloc interposer trait: the default traits also pull in a runtime interposer.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // The limit: libdeflate + mdb_put/mdb_get/cursor scan, no Swift in the loop.
        .target(
            name: "CPath",
            linkerSettings: [.linkedLibrary("lmdb"), .linkedLibrary("z"), .linkedLibrary("deflate")]
        ),
        // The workloads shared by both runners: feeds, the stores compared, timing.
        .target(
            name: "BenchSupport",
            dependencies: [
                "CPath",
                .product(name: "CacheLog", package: "CacheLog"),
                .product(name: "FeedCache", package: "CacheLog"),
                .product(name: "FeedCacheLog", package: "CacheLog"),
                .product(name: "FeedAPI", package: "CacheLog"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .executableTarget(
            name: "bench-compare",
            dependencies: ["BenchSupport", "CPath", .product(name: "CacheLogKit", package: "CacheLog")]
        ),
        .executableTarget(
            name: "CacheLogBenchmarks",
            dependencies: [
                "BenchSupport",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/CacheLogBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
