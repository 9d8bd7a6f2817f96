import CoreMetrics
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the client counts, through swift-metrics: the app chooses the backend (Prometheus,
/// OpenTelemetry, …) by bootstrapping `MetricsSystem`, or hands one to the client; with none,
/// swift-metrics' no-op handlers make every count free.
///
/// Every metric is dimensioned by contract (`contract`), never by key: keys are unbounded (a
/// search key per query), and a backend keeps a series per distinct set of dimensions.
struct CacheMetrics: Sendable {
    /// The labels, as a backend lists them.
    enum Label {
        /// Loads the cache answered.
        static let hits = "cachelog_cache_hits_total"
        /// Loads that asked the cache and found nothing usable (empty, expired, unreadable).
        static let misses = "cachelog_cache_misses_total"
        /// Cached items shown while older than their max age, before the remote's (cache then remote).
        static let staleServed = "cachelog_stale_served_total"
        /// Remote items saved into the cache.
        static let saves = "cachelog_saves_total"
        /// Remote items that could not be saved, or were refused for a newer cache.
        static let failedSaves = "cachelog_failed_saves_total"
        /// Caches validation expired.
        static let expires = "cachelog_expires_total"
        /// Loads the remote answered "not modified" (HTTP 304).
        static let revalidations = "cachelog_revalidations_total"
        /// How long each request to the remote took.
        static let remoteLatency = "cachelog_remote_request_duration"
    }

    let factory: (any MetricsFactory)?

    func count(_ label: String, contract: ContractName?) {
        counter(label, contract).increment()
    }

    private func counter(_ label: String, _ contract: ContractName?) -> Counter {
        let dimensions = [("contract", contract?.name ?? "")]
        if let factory { return Counter(label: label, dimensions: dimensions, factory: factory) }
        return Counter(label: label, dimensions: dimensions)
    }

    /// Runs `request` and records how long it took, success or failure.
    func timingRemote<T>(contract: ContractName, _ request: () async throws -> T) async throws -> T {
        let started = ContinuousClock.now
        defer {
            let elapsed = ContinuousClock.now - started
            let nanoseconds = elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
            timer(contract).recordNanoseconds(nanoseconds)
        }
        return try await request()
    }

    private func timer(_ contract: ContractName) -> CoreMetrics.Timer {
        let dimensions = [("contract", contract.name)]
        if let factory { return CoreMetrics.Timer(label: Label.remoteLatency, dimensions: dimensions, factory: factory) }
        return CoreMetrics.Timer(label: Label.remoteLatency, dimensions: dimensions)
    }

    /// Counts what a load's outcome says: a hit or a miss of the cache (when it was asked), a
    /// save or a failed save, a revalidation.
    func record<Item>(_ loaded: LoadedFeed<Item>, strategy: CacheStrategy, contract: ContractName) {
        switch (loaded.source, strategy) {
        case (.cache, _): count(Label.hits, contract: contract)
        // The cache was asked first and had nothing usable.
        case (.remote, .cacheFirst), (.remote, .cacheOnly): count(Label.misses, contract: contract)
        case (.remote, .remoteFirst): break
        }
        switch loaded.cacheSave {
        case .saved: count(Label.saves, contract: contract)
        case .failed, .superseded: count(Label.failedSaves, contract: contract)
        case .notAttempted: break
        }
        if loaded.revalidated { count(Label.revalidations, contract: contract) }
    }
}
