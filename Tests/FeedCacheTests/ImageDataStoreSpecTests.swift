import FeedCache
import Testing

/// Runs every `ImageDataStoreSpecs` spec against every `ImageStoreKind`.
@Suite("ImageDataStore specs")
struct ImageDataStoreSpecTests {
    @Test(arguments: ImageStoreKind.allCases)
    func retrieveImageData_deliversNotFoundWhenEmpty(_ kind: ImageStoreKind) async throws {
        try await ImageDataStoreSpecs.retrieveImageData_deliversNotFoundWhenEmpty(kind.makeEmptyStore())
    }

    @Test(arguments: ImageStoreKind.allCases)
    func retrieveImageData_deliversNotFoundWhenStoredDataURLDoesNotMatch(_ kind: ImageStoreKind) async throws {
        try await ImageDataStoreSpecs.retrieveImageData_deliversNotFoundWhenStoredDataURLDoesNotMatch(kind.makeEmptyStore())
    }

    @Test(arguments: ImageStoreKind.allCases)
    func retrieveImageData_deliversFoundDataWhenThereIsStoredDataMatchingURL(_ kind: ImageStoreKind) async throws {
        try await ImageDataStoreSpecs.retrieveImageData_deliversFoundDataWhenThereIsStoredDataMatchingURL(kind.makeEmptyStore())
    }

    @Test(arguments: ImageStoreKind.allCases)
    func retrieveImageData_deliversLastInsertedValue(_ kind: ImageStoreKind) async throws {
        try await ImageDataStoreSpecs.retrieveImageData_deliversLastInsertedValue(kind.makeEmptyStore())
    }

    @Test(arguments: ImageStoreKind.allCases)
    func insert_keepsDataStoredForOtherURLs(_ kind: ImageStoreKind) async throws {
        try await ImageDataStoreSpecs.insert_keepsDataStoredForOtherURLs(kind.makeEmptyStore())
    }
}
