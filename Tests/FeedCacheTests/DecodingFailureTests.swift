import FeedCache
import Foundation
import Testing

/// A payload that does not decode is described in words (which field of which item, and what is
/// wrong with it), from the `DecodingError` a real `JSONDecoder` throws, and a loader's
/// ``InvalidCachedFeedError`` says it with its contract.
@Suite("Decoding failures in words")
struct DecodingFailureTests {
    struct Place: Codable, Sendable { let lat: Double }
    struct Item: Codable, Sendable {
        let id: String
        let count: Int
        let link: URL
        let place: Place?
    }

    private func failure<T: Decodable>(_ json: String, as type: T.Type = [Item].self) throws -> DecodingFailure {
        do {
            _ = try JSONDecoder().decode(T.self, from: Data(json.utf8))
        } catch let error as DecodingError {
            return DecodingFailure(error)
        }
        throw AnyError("\(json) decoded")
    }

    @Test func eachKindOfFailure_namesTheItemTheFieldAndWhatIsWrong() throws {
        let good = #"{"id":"a","count":1,"link":"https://example.com"}"#
        let cases: [(String, String)] = [
            ("[\(good),{\"count\":1,\"link\":\"https://example.com\"}]", #"item 1 has no "id""#),
            (#"[{"id":5,"count":1,"link":"https://example.com"}]"#, #""id" of item 0 is not a string"#),
            (#"[{"id":"a","count":null,"link":"https://example.com"}]"#, #""count" of item 0 is null, not a number"#),
            (#"[{"id":"a","count":1,"link":"https://example.com","place":{}}]"#, #""place" of item 0 has no "lat""#),
            (#"[{"id":"a","count":1,"link":"https://example.com","place":{"lat":"north"}}]"#, #""place.lat" of item 0 is not a number"#),
            ("[\(good),7]", "item 1 is not an object"),
            (#"{"items":[]}"#, "the payload is not an array"),
            ("not json", "the payload is not valid JSON"),
        ]
        for (json, says) in cases {
            #expect(try failure(json).description == says, "\(json)")
        }
        let missing = try failure("[\(good),{\"count\":1,\"link\":\"https://example.com\"}]")
        #expect(missing.item == 1 && missing.field == "id" && missing.problem == .missing)
    }

    @Test func aPayloadThatIsAnObject_isNamedByItsWholePath() throws {
        struct Genres: Decodable { let genres: [Item] }
        let described = try failure(#"{"genres":[{"id":"a","count":"many","link":"https://example.com"}]}"#, as: Genres.self)
        #expect(described.item == nil && described.field == "genres[0].count")
        #expect(described.description == #""genres[0].count" of the payload is not a number"#)
    }

    @Test func invalidCachedFeedError_saysTheContractAndTheFailure_andKeepsItsCause() async throws {
        let store = InMemoryFeedStore(cachedFeed: CachedFeed(feed: Data(#"[{"id":"a"}]"#.utf8), timestamp: fixedCurrentDate))
        let sut = LocalFeedLoader<Item>(store: store, currentDate: { fixedCurrentDate }, contract: "things")

        let error = await #expect(throws: InvalidCachedFeedError.self) { try await sut.load() }

        #expect(error?.description == #"The cached feed does not decode under contract things: item 0 has no "count"."#)
        #expect(error?.contract == "things")
        #expect(error?.underlying is DecodingError)
    }
}
