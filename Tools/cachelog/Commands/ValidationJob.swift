import FeedAPI
import FeedCache
import Foundation
import Logging

/// The validate-cache use case over one key, its payload decoded under the contract it was saved
/// with (or not decoded, when it recorded none).
struct ValidationJob: ContractBody {
    let store: any FeedStore
    let clock: @Sendable () -> Date
    let policy: CachePolicy
    let judging: PolicyChoice
    let logger: Logger

    func run(_ contract: Contract?) async throws {
        guard let contract else {
            return try await run(coder: FeedPayloadCoder<Data>.bytes)
        }
        try await contract.visit(self)
    }

    func run<Item: Sendable>(
        _ mapper: @escaping @Sendable (Data, HTTPResponse) throws -> [Item], coder: FeedPayloadCoder<Item>,
        contract: Contract, render: @escaping @Sendable (Item) throws -> String
    ) async throws {
        try await run(coder: coder)
    }

    private func run<Item: Sendable>(coder: FeedPayloadCoder<Item>) async throws {
        try await LocalFeedLoader(
            store: store, currentDate: clock, policy: policy, coder: coder, judging: judging, logger: logger
        ).validateCache()
    }
}
