import FeedAPI
import FeedCache
import Foundation

/// Work that depends on a contract's item type (see ``Contract/visit(_:)``).
protocol ContractBody {
    associatedtype Result
    func run<Item: Sendable>(
        _ mapper: @escaping @Sendable (Data, HTTPResponse) throws -> [Item], coder: FeedPayloadCoder<Item>,
        contract: Contract, render: @escaping @Sendable (Item) throws -> String
    ) async throws -> Result
}

extension ContractBody {
    /// `run` for `Codable` items: cached as sorted-key JSON, printed as compact sorted-key JSON.
    func codable<Item: Codable & Sendable>(
        _ mapper: @escaping @Sendable (Data, HTTPResponse) throws -> [Item], contract: Contract
    ) async throws -> Result {
        try await run(mapper, coder: .json, contract: contract) { try JSONOutput(keyOrder: .sorted).string($0) }
    }
}
