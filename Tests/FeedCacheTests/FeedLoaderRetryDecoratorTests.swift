import FeedCache
import Foundation
import Testing

@Suite("Feed loader retry decorator")
struct FeedLoaderRetryDecoratorTests {
    private static let invalidData = AnyError("invalid data")
    private static let connectivity = AnyError("connectivity")
    private static let retryInvalidData: @Sendable (any Error) -> Bool = { $0 as? AnyError == invalidData }

    @Test func load_asksOnceAndDeliversOnFirstSuccess() async throws {
        let feed = remoteFeed()
        let decoratee = FeedLoaderSpy(.success(feed))
        let sut = makeSUT(decoratee, retries: 2)

        #expect(try await sut.loadFeed() == feed)
        #expect(await decoratee.callCount == 1)
    }

    @Test func load_makesThreeAttemptsWithTwoRetriesThenFailsWithTheLastError() async {
        let decoratee = FeedLoaderSpy(.failure(Self.invalidData))
        let sut = makeSUT(decoratee, retries: 2)

        await #expect(throws: Self.invalidData) {
            try await sut.loadFeed()
        }
        #expect(await decoratee.callCount == 3)
    }

    @Test func load_deliversTheFirstSuccessfulAttemptAfterRetryableFailures() async throws {
        let feed = remoteFeed()
        let decoratee = FeedLoaderSpy(.failure(Self.invalidData), .failure(Self.invalidData), .success(feed))
        let sut = makeSUT(decoratee, retries: 2)

        #expect(try await sut.loadFeed() == feed)
        #expect(await decoratee.callCount == 3)
    }

    @Test func load_doesNotRetryAnErrorThePredicateRejects() async {
        let decoratee = FeedLoaderSpy(.failure(Self.connectivity), .success(remoteFeed()))
        let sut = makeSUT(decoratee, retries: 2)

        await #expect(throws: Self.connectivity) {
            try await sut.loadFeed()
        }
        #expect(await decoratee.callCount == 1)
    }

    @Test func load_stopsRetryingAtTheFirstNonRetryableError() async {
        let decoratee = FeedLoaderSpy(.failure(Self.invalidData), .failure(Self.connectivity), .success(remoteFeed()))
        let sut = makeSUT(decoratee, retries: 5)

        await #expect(throws: Self.connectivity) {
            try await sut.loadFeed()
        }
        #expect(await decoratee.callCount == 2)
    }

    @Test(arguments: [0, -1])
    func load_asksOnceWithNoRetries(_ retries: Int) async {
        let decoratee = FeedLoaderSpy(.failure(Self.invalidData))
        let sut = makeSUT(decoratee, retries: retries)

        _ = try? await sut.loadFeed()

        #expect(await decoratee.callCount == 1)
    }

    @Test func load_neverRetriesCancellation() async {
        let decoratee = FeedLoaderSpy(.failure(CancellationError()))
        let sut = FeedLoaderRetryDecorator(decoratee: decoratee, retries: 2, isRetryable: { _ in true })

        await #expect(throws: CancellationError.self) {
            try await sut.loadFeed()
        }
        #expect(await decoratee.callCount == 1)
    }

    private func makeSUT(_ decoratee: FeedLoaderSpy, retries: Int) -> FeedLoaderRetryDecorator<TestItem> {
        FeedLoaderRetryDecorator(decoratee: decoratee, retries: retries, isRetryable: Self.retryInvalidData)
    }
}
