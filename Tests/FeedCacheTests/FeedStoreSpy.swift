import FeedCache
import Foundation

/// A ``FeedStore`` that records what it was asked and answers what it was told to.
actor FeedStoreSpy: FeedStore {
    enum Message: Equatable {
        case retrieve
        case insert(Data, Date, RecordedPolicy? = nil, CacheValidators = .none)
        case replace(Data, Date, RecordedPolicy? = nil, CacheValidators = .none)
        case delete(DeletionReason)
        case expire(Date, TimeInterval)
    }

    private(set) var messages: [Message] = []
    private var retrievalResult: Result<CachedFeed?, AnyError>
    private var writeError: AnyError?

    init(retrieving result: Result<CachedFeed?, AnyError> = .success(nil), failingWritesWith writeError: AnyError? = nil) {
        self.retrievalResult = result
        self.writeError = writeError
    }

    func deleteCachedFeed(reason: DeletionReason) throws {
        messages.append(.delete(reason))
        if let writeError { throw writeError }
    }

    func insert(_ feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) throws {
        messages.append(.insert(feed, timestamp, policy, validators))
        if let writeError { throw writeError }
    }

    func replace(with feed: Data, timestamp: Date, policy: RecordedPolicy?, validators: CacheValidators) throws {
        messages.append(.replace(feed, timestamp, policy, validators))
        if let writeError { throw writeError }
    }

    func expireCachedFeed(timestamp: Date, maxAge: TimeInterval) throws {
        messages.append(.expire(timestamp, maxAge))
        if let writeError { throw writeError }
    }

    func retrieve() throws -> CachedFeed? {
        messages.append(.retrieve)
        return try retrievalResult.get()
    }
}
