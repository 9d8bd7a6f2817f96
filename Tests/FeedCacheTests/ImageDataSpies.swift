import FeedCache
import Foundation

/// An ``ImageDataStore`` that records what it was asked and answers what it was told to.
actor ImageDataStoreSpy: ImageDataStore {
    enum Message: Equatable {
        case insert(Data, URL)
        case retrieve(URL)
    }

    private(set) var messages: [Message] = []
    private let retrievalResult: Result<Data?, AnyError>
    private let insertionError: AnyError?
    private let cancelsTaskWhileRetrieving: Bool

    init(
        retrieving result: Result<Data?, AnyError> = .success(nil),
        failingInsertionWith insertionError: AnyError? = nil,
        cancelsTaskWhileRetrieving: Bool = false
    ) {
        self.retrievalResult = result
        self.insertionError = insertionError
        self.cancelsTaskWhileRetrieving = cancelsTaskWhileRetrieving
    }

    func insert(_ data: Data, for url: URL) throws {
        messages.append(.insert(data, url))
        if let insertionError { throw insertionError }
    }

    func retrieve(dataForURL url: URL) throws -> Data? {
        messages.append(.retrieve(url))
        if cancelsTaskWhileRetrieving { withUnsafeCurrentTask { $0?.cancel() } }
        return try retrievalResult.get()
    }
}

/// An ``ImageDataLoader`` that answers a stubbed result and records the URLs it was asked for.
actor ImageDataLoaderSpy: ImageDataLoader, ImageDataCaching {
    private let result: Result<Data, any Error>
    private let saveError: AnyError?
    private(set) var loadedURLs: [URL] = []
    private(set) var saved: [Data] = []
    private(set) var savedURLs: [URL] = []

    init(_ result: Result<Data, any Error> = .failure(AnyError("not stubbed")), failingSaveWith saveError: AnyError? = nil) {
        self.result = result
        self.saveError = saveError
    }

    func loadImageData(from url: URL) throws -> Data {
        loadedURLs.append(url)
        return try result.get()
    }

    func save(_ data: Data, for url: URL) throws {
        saved.append(data)
        savedURLs.append(url)
        if let saveError { throw saveError }
    }
}
