import FeedCache
import Foundation
import Testing

@Suite("Image data loader with fallback")
struct ImageDataLoaderWithFallbackCompositeTests {
    @Test func load_deliversPrimaryDataWithoutAskingTheFallback() async throws {
        let fallback = ImageDataLoaderSpy(.success(anyData("fallback")))
        let sut = ImageDataLoaderWithFallbackComposite(primary: ImageDataLoaderSpy(.success(anyData("primary"))), fallback: fallback)

        #expect(try await sut.loadImageData(from: anyURL()) == anyData("primary"))
        #expect(await fallback.loadedURLs.isEmpty)
    }

    @Test func load_deliversFallbackDataForTheSameURLOnPrimaryFailure() async throws {
        let (url, fallback) = (anyURL(), ImageDataLoaderSpy(.success(anyData("fallback"))))
        let sut = ImageDataLoaderWithFallbackComposite(primary: ImageDataLoaderSpy(.failure(anyError())), fallback: fallback)

        #expect(try await sut.loadImageData(from: url) == anyData("fallback"))
        #expect(await fallback.loadedURLs == [url])
    }

    @Test func load_failsWithTheFallbackErrorOnBothFailures() async {
        let sut = ImageDataLoaderWithFallbackComposite(
            primary: ImageDataLoaderSpy(.failure(anyError("primary"))),
            fallback: ImageDataLoaderSpy(.failure(anyError("fallback")))
        )

        await #expect(throws: anyError("fallback")) {
            try await sut.loadImageData(from: anyURL())
        }
    }

    @Test func load_doesNotFallBackWhenThePrimaryWasCancelled() async {
        let fallback = ImageDataLoaderSpy(.success(anyData()))
        let sut = ImageDataLoaderWithFallbackComposite(primary: ImageDataLoaderSpy(.failure(CancellationError())), fallback: fallback)

        await #expect(throws: CancellationError.self) {
            try await sut.loadImageData(from: anyURL())
        }
        #expect(await fallback.loadedURLs.isEmpty)
    }

    @Test func localWithRemoteFallback_loadsFromRemoteOnceThenFromTheCache() async throws {
        let url = anyURL("image.png")
        let remote = ImageDataLoaderSpy(.success(anyData("png")))
        let local = LocalImageDataLoader(store: InMemoryImageDataStore())
        let sut = ImageDataLoaderWithFallbackComposite(
            primary: local,
            fallback: ImageDataLoaderCacheDecorator(decoratee: remote, cache: local)
        )

        #expect(try await sut.loadImageData(from: url) == anyData("png"))
        #expect(try await sut.loadImageData(from: url) == anyData("png"))
        #expect(await remote.loadedURLs == [url])
    }
}

@Suite("Image data loader cache decorator")
struct ImageDataLoaderCacheDecoratorTests {
    @Test func load_deliversTheDecorateeDataAndCachesItForTheURL() async throws {
        let (url, cache) = (anyURL(), ImageDataLoaderSpy())
        let sut = ImageDataLoaderCacheDecorator(decoratee: ImageDataLoaderSpy(.success(anyData("png"))), cache: cache)

        #expect(try await sut.loadImageData(from: url) == anyData("png"))
        #expect(await cache.saved == [anyData("png")])
        #expect(await cache.savedURLs == [url])
    }

    @Test func load_failsWithTheDecorateeErrorAndCachesNothing() async {
        let cache = ImageDataLoaderSpy()
        let sut = ImageDataLoaderCacheDecorator(decoratee: ImageDataLoaderSpy(.failure(anyError("remote"))), cache: cache)

        await #expect(throws: anyError("remote")) {
            try await sut.loadImageData(from: anyURL())
        }
        #expect(await cache.saved.isEmpty)
    }

    @Test func load_deliversTheDataEvenWhenCachingFails() async throws {
        let sut = ImageDataLoaderCacheDecorator(
            decoratee: ImageDataLoaderSpy(.success(anyData("png"))),
            cache: ImageDataLoaderSpy(failingSaveWith: anyError("disk full"))
        )

        #expect(try await sut.loadImageData(from: anyURL()) == anyData("png"))
    }
}
