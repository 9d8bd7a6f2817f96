import FeedCache
import Foundation
import Testing

/// The ``ImageDataStore`` contract as runnable specs, written once and run against every store.
///
/// Each spec takes an empty store under test. Run them through a parameterized suite, like
/// `ImageDataStoreSpecTests` over `ImageStoreKind`.
enum ImageDataStoreSpecs {
    static let url = anyURL("image-1.png")
    static let otherURL = anyURL("image-2.png")

    static func retrieveImageData_deliversNotFoundWhenEmpty(_ sut: some ImageDataStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(try await sut.retrieve(dataForURL: url) == nil, sourceLocation: sourceLocation)
    }

    static func retrieveImageData_deliversNotFoundWhenStoredDataURLDoesNotMatch(_ sut: some ImageDataStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.insert(anyData(), for: url)

        #expect(try await sut.retrieve(dataForURL: otherURL) == nil, sourceLocation: sourceLocation)
    }

    static func retrieveImageData_deliversFoundDataWhenThereIsStoredDataMatchingURL(_ sut: some ImageDataStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let data = Data((0...255).map { UInt8($0) })
        try await sut.insert(data, for: url)

        #expect(try await sut.retrieve(dataForURL: url) == data, sourceLocation: sourceLocation)
    }

    static func retrieveImageData_deliversLastInsertedValue(_ sut: some ImageDataStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.insert(anyData("first"), for: url)
        try await sut.insert(anyData("last"), for: url)

        #expect(try await sut.retrieve(dataForURL: url) == anyData("last"), sourceLocation: sourceLocation)
    }

    static func insert_keepsDataStoredForOtherURLs(_ sut: some ImageDataStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sut.insert(anyData("first"), for: url)
        try await sut.insert(anyData("other"), for: otherURL)

        #expect(try await sut.retrieve(dataForURL: url) == anyData("first"), sourceLocation: sourceLocation)
        #expect(try await sut.retrieve(dataForURL: otherURL) == anyData("other"), sourceLocation: sourceLocation)
    }
}
