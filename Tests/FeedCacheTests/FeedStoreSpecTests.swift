import FeedCache
import Testing

/// Runs every `FeedStoreSpecs` spec against every `StoreKind`, and the failure specs against every
/// `FailingStoreKind`.
@Suite("FeedStore specs")
struct FeedStoreSpecTests {
    @Test(arguments: StoreKind.allCases)
    func retrieve_deliversEmptyOnEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.retrieve_deliversEmptyOnEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func retrieve_hasNoSideEffectsOnEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.retrieve_hasNoSideEffectsOnEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func retrieve_deliversFoundValuesOnNonEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.retrieve_deliversFoundValuesOnNonEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func retrieve_hasNoSideEffectsOnNonEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.retrieve_hasNoSideEffectsOnNonEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func retrieve_deliversTheTimestampAsInserted_atRandomInstants(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.retrieve_deliversTheTimestampAsInserted_atRandomInstants(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func retrieve_deliversPayloadsByteForByte(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.retrieve_deliversPayloadsByteForByte(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func insert_deliversNoErrorOnEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.insert_deliversNoErrorOnEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func insert_deliversNoErrorOnNonEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.insert_deliversNoErrorOnNonEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func insert_overridesPreviouslyInsertedCacheValues(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.insert_overridesPreviouslyInsertedCacheValues(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func insert_deliversValuesInsertedAfterTheCacheWasDeleted(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.insert_deliversValuesInsertedAfterTheCacheWasDeleted(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func replace_deliversNoErrorOnEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.replace_deliversNoErrorOnEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func replace_deliversNoErrorOnNonEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.replace_deliversNoErrorOnNonEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func replace_overridesPreviouslyInsertedCacheValues(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.replace_overridesPreviouslyInsertedCacheValues(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func delete_deliversNoErrorOnEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.delete_deliversNoErrorOnEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func delete_hasNoSideEffectsOnEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.delete_hasNoSideEffectsOnEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func delete_deliversNoErrorOnNonEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.delete_deliversNoErrorOnNonEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func delete_emptiesPreviouslyInsertedCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.delete_emptiesPreviouslyInsertedCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func expire_deliversNoErrorOnEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.expire_deliversNoErrorOnEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func expire_hasNoSideEffectsOnEmptyCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.expire_hasNoSideEffectsOnEmptyCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func expire_emptiesPreviouslyInsertedCache(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.expire_emptiesPreviouslyInsertedCache(kind.makeEmptyStore())
    }

    @Test(arguments: StoreKind.allCases)
    func sideEffects_runSerially(_ kind: StoreKind) async throws {
        try await FeedStoreSpecs.sideEffects_runSerially(kind.makeEmptyStore())
    }

    @Test(arguments: FailingStoreKind.allCases)
    func retrieve_deliversFailureOnRetrievalError(_ kind: FailingStoreKind) async throws {
        try await FeedStoreSpecs.retrieve_deliversFailureOnRetrievalError(kind.makeStoreFailingRetrieval())
    }

    @Test(arguments: FailingStoreKind.allCases)
    func retrieve_hasNoSideEffectsOnFailure(_ kind: FailingStoreKind) async throws {
        try await FeedStoreSpecs.retrieve_hasNoSideEffectsOnFailure(kind.makeStoreFailingRetrieval())
    }

    @Test(arguments: FailingStoreKind.allCases)
    func insert_deliversErrorOnInsertionError(_ kind: FailingStoreKind) async throws {
        try await FeedStoreSpecs.insert_deliversErrorOnInsertionError(kind.makeStoreFailingWrites())
    }

    @Test(arguments: FailingStoreKind.allCases)
    func insert_hasNoSideEffectsOnInsertionError(_ kind: FailingStoreKind) async throws {
        try await FeedStoreSpecs.insert_hasNoSideEffectsOnInsertionError(kind.makeStoreFailingWrites())
    }

    @Test(arguments: FailingStoreKind.allCases)
    func replace_deliversErrorOnReplacementError(_ kind: FailingStoreKind) async throws {
        try await FeedStoreSpecs.replace_deliversErrorOnReplacementError(kind.makeStoreFailingWrites())
    }

    @Test(arguments: FailingStoreKind.allCases)
    func replace_hasNoSideEffectsOnReplacementError(_ kind: FailingStoreKind) async throws {
        try await FeedStoreSpecs.replace_hasNoSideEffectsOnReplacementError(kind.makeStoreFailingWrites())
    }

    @Test(arguments: FailingStoreKind.allCases)
    func delete_deliversErrorOnDeletionError(_ kind: FailingStoreKind) async throws {
        try await FeedStoreSpecs.delete_deliversErrorOnDeletionError(kind.makeStoreFailingWrites())
    }

    @Test(arguments: FailingStoreKind.allCases)
    func delete_hasNoSideEffectsOnDeletionError(_ kind: FailingStoreKind) async throws {
        try await FeedStoreSpecs.delete_hasNoSideEffectsOnDeletionError(kind.makeStoreFailingWrites())
    }

    @Test(arguments: FailingStoreKind.allCases)
    func expire_deliversErrorOnExpiryError(_ kind: FailingStoreKind) async throws {
        try await FeedStoreSpecs.expire_deliversErrorOnExpiryError(kind.makeStoreFailingWrites())
    }

    @Test(arguments: FailingStoreKind.allCases)
    func expire_hasNoSideEffectsOnExpiryError(_ kind: FailingStoreKind) async throws {
        try await FeedStoreSpecs.expire_hasNoSideEffectsOnExpiryError(kind.makeStoreFailingWrites())
    }
}
