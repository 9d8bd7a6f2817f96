import FeedCache
import Foundation
import Testing

@Suite("Local image data loader")
struct LocalImageDataLoaderTests {
    @Test func init_doesNotMessageStoreUponCreation() async {
        let store = ImageDataStoreSpy()
        _ = LocalImageDataLoader(store: store)

        #expect(await store.messages.isEmpty)
    }

    // MARK: - Load

    @Test func load_requestsStoredDataForTheURL() async {
        let (url, store) = (anyURL(), ImageDataStoreSpy())
        let sut = LocalImageDataLoader(store: store)

        _ = try? await sut.loadImageData(from: url)

        #expect(await store.messages == [.retrieve(url)])
    }

    @Test func load_failsWithFailedOnRetrievalError_keepingTheStoresReason() async {
        let sut = LocalImageDataLoader(store: ImageDataStoreSpy(retrieving: .failure(anyError())))

        await #expect(throws: LocalImageDataLoader.LoadError.failed(reason: "\(anyError())")) {
            try await sut.loadImageData(from: anyURL())
        }
    }

    @Test func load_failsWithNotFoundWhenNothingIsStoredForTheURL() async {
        let sut = LocalImageDataLoader(store: ImageDataStoreSpy(retrieving: .success(nil)))

        await #expect(throws: LocalImageDataLoader.LoadError.notFound) {
            try await sut.loadImageData(from: anyURL())
        }
    }

    @Test func load_deliversStoredDataForTheURL() async throws {
        let data = anyData("png")
        let sut = LocalImageDataLoader(store: ImageDataStoreSpy(retrieving: .success(data)))

        #expect(try await sut.loadImageData(from: anyURL()) == data)
    }

    @Test(arguments: [Result<Data?, AnyError>.success(Data("png".utf8)), .success(nil), .failure(AnyError())])
    func load_deliversNeitherDataNorAFailureOfItsOwnAfterTheTaskIsCancelled(_ result: Result<Data?, AnyError>) async {
        let sut = LocalImageDataLoader(store: ImageDataStoreSpy(retrieving: result, cancelsTaskWhileRetrieving: true))

        await #expect(throws: CancellationError.self) {
            try await Task { try await sut.loadImageData(from: anyURL()) }.value
        }
    }

    // MARK: - Save

    @Test func save_requestsInsertionOfTheDataForTheURL() async throws {
        let (data, url, store) = (anyData(), anyURL(), ImageDataStoreSpy())
        let sut = LocalImageDataLoader(store: store)

        try await sut.save(data, for: url)

        #expect(await store.messages == [.insert(data, url)])
    }

    @Test func save_failsWithFailedOnInsertionError_keepingTheStoresReason() async {
        let sut = LocalImageDataLoader(store: ImageDataStoreSpy(failingInsertionWith: anyError()))

        await #expect(throws: LocalImageDataLoader.SaveError.failed(reason: "\(anyError())")) {
            try await sut.save(anyData(), for: anyURL())
        }
    }

    @Test func save_thenLoad_deliversTheSavedDataForThatURLOnly() async throws {
        let sut = LocalImageDataLoader(store: InMemoryImageDataStore())

        try await sut.save(anyData("png"), for: anyURL("a"))

        #expect(try await sut.loadImageData(from: anyURL("a")) == anyData("png"))
        await #expect(throws: LocalImageDataLoader.LoadError.notFound) {
            try await sut.loadImageData(from: anyURL("b"))
        }
    }
}
