import CacheLogKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `load`'s options as the library's resource: a feed, an object, a search's first page or its
/// next one, whichever the contract and `--query`/`--more` say. It composes and renders; the
/// rules are the library's.
struct LoadRequest: BuiltInContractVisitor {
    let client: CacheClient
    let key: String
    let url: String
    let query: String?
    let more: Bool
    let maxAge: MaxAge?
    let strategy: CacheStrategy?
    let retries: Int?
    /// Retries wait within this (the whole load's `--timeout`).
    let budget: Duration

    func feed<Item: Sendable>(_ contract: FeedContract<Item>) async throws -> LoadReport {
        guard let remote = URL(string: url) else { throw CLIFailure("'\(url)' is not a URL") }
        var resource = client.feed(key, at: remote, contract: contract)
        resource.maxAge = maxAge
        resource.strategy = strategy ?? resource.strategy
        resource.retries = retries ?? resource.retries
        resource.backoff = .exponential(within: budget)
        return try LoadReport(await resource.load(), at: client.clock(), render: LoadReport.json)
    }

    func search<Item: Codable & Sendable>(_ contract: SearchContract<Item>) async throws -> LoadReport {
        // A search's URL loaded without a query is its first page, cached as a feed.
        guard let query else { return try await feed(FeedContract(firstPageOf: contract)) }
        var resource = client.search(query, at: url, contract: contract, key: key)
        resource.maxAge = maxAge
        resource.strategy = strategy ?? resource.strategy
        resource.retries = retries ?? resource.retries
        resource.backoff = .exponential(within: budget)
        let loaded = more ? try await resource.loadMore() : try await resource.load()
        return try LoadReport(loaded, at: client.clock(), render: LoadReport.json)
    }
}
