import FeedCache
import Foundation
import TestSupport
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

    @Test func load_waitsBeforeEachRetry_doublingUpToTheMaximum() async {
        let clock = ImmediateClock()
        let decoratee = FeedLoaderSpy(.failure(Self.invalidData))
        let sut = FeedLoaderRetryDecorator(
            decoratee: decoratee, retries: 5, backoff: RetryBackoff(initial: .milliseconds(500), maximum: .seconds(2)), clock: clock,
            isRetryable: Self.retryInvalidData)

        _ = try? await sut.loadFeed()

        #expect(await decoratee.callCount == 6)
        #expect(clock.sleeps == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(2), .seconds(2)])
    }

    /// Each attempt takes 200 ms on the clock. Retry 2's wait (1 s) ends at 1.9 s, within the 2 s
    /// budget; retry 3's (2 s) would end at 4.1 s, so it is not made and the last error stands.
    @Test func load_withABudget_makesNoRetryWhoseWaitWouldEndPastIt() async {
        let clock = ImmediateClock()
        let decoratee = TimedFailures(clock: clock, each: .milliseconds(200), error: Self.invalidData)
        let sut = FeedLoaderRetryDecorator(
            decoratee: decoratee, retries: 5, backoff: .exponential(within: .seconds(2)), clock: clock, isRetryable: Self.retryInvalidData)

        await #expect(throws: Self.invalidData) { try await sut.loadFeed() }

        #expect(decoratee.attempts == 3)
        #expect(clock.sleeps == [.milliseconds(500), .seconds(1)])
    }

    @Test func load_withABudget_makesARetryWhoseWaitEndsExactlyAtIt() async {
        let clock = ImmediateClock()
        let decoratee = TimedFailures(clock: clock, each: .milliseconds(500), error: Self.invalidData)
        let sut = FeedLoaderRetryDecorator(
            decoratee: decoratee, retries: 1, backoff: .exponential(within: .seconds(1)), clock: clock, isRetryable: Self.retryInvalidData)

        _ = try? await sut.loadFeed()

        #expect(decoratee.attempts == 2, "0.5 s of attempt and 0.5 s of wait end at the 1 s budget, not past it")
    }

    private func makeSUT(_ decoratee: FeedLoaderSpy, retries: Int) -> FeedLoaderRetryDecorator<TestItem> {
        FeedLoaderRetryDecorator(decoratee: decoratee, retries: retries, isRetryable: Self.retryInvalidData)
    }
}

/// A remote whose every attempt takes `each` on `clock` and then fails with `error`.
private final class TimedFailures: FeedLoader, @unchecked Sendable {
    private let clock: ImmediateClock
    private let each: Duration
    private let error: AnyError
    private let lock = NSLock()
    private var count = 0

    init(clock: ImmediateClock, each: Duration, error: AnyError) {
        self.clock = clock
        self.each = each
        self.error = error
    }

    var attempts: Int { lock.withLock { count } }

    func loadFeed() async throws -> LoadedFeed<TestItem> {
        lock.withLock { count += 1 }
        clock.advance(by: each)
        throw error
    }
}
