import FeedAPI
import Foundation
import TestSupport
import Testing

let nonOKStatuses = [199, 201, 300, 400, 500]

@Suite("FeedImagesMapper")
struct FeedImagesMapperTests {
    @Test(arguments: nonOKStatuses)
    func map_throwsInvalidDataOnNon200HTTPResponse(status: Int) throws {
        let data = json(#"{"items":[]}"#)
        #expect(throws: RemoteLoaderError.invalidData) {
            try FeedImagesMapper.map(data, from: response(status))
        }
    }

    @Test(arguments: ["", "not json", #"{"images":[]}"#, #"{"items":[{"id":"not-a-uuid","image":"http://x.test/1"}]}"#, #"{"items":[{"id":"7E3C6B3A-1B8B-4F3F-9E39-4F4E2B1B2C3D"}]}"#])
    func map_throwsInvalidDataOn200HTTPResponseWithInvalidJSON(body: String) throws {
        #expect(throws: RemoteLoaderError.invalidData) {
            try FeedImagesMapper.map(json(body), from: response(200))
        }
    }

    @Test
    func map_deliversNoItemsOn200HTTPResponseWithEmptyJSONList() throws {
        #expect(try FeedImagesMapper.map(json(#"{"items":[]}"#), from: response(200)) == [])
    }

    @Test
    func map_deliversItemsOn200HTTPResponseWithJSONItems() throws {
        let body = json("""
        {"items":[
          {"id":"7E3C6B3A-1B8B-4F3F-9E39-4F4E2B1B2C3D","image":"http://a-url.test/1.jpg"},
          {"id":"0f8fad5b-d9cb-469f-a165-70867728950e","description":"a description","location":"a location","image":"http://a-url.test/2.jpg"}
        ]}
        """)
        let images = try FeedImagesMapper.map(body, from: response(200))
        #expect(images == [
            FeedImage(id: try #require(UUID(uuidString: "7E3C6B3A-1B8B-4F3F-9E39-4F4E2B1B2C3D")), description: nil, location: nil,
                      url: try #require(URL(string: "http://a-url.test/1.jpg"))),
            FeedImage(id: try #require(UUID(uuidString: "0F8FAD5B-D9CB-469F-A165-70867728950E")), description: "a description",
                      location: "a location", url: try #require(URL(string: "http://a-url.test/2.jpg"))),
        ])
    }

    @Test
    func feedImage_roundTripsThroughItsOwnCodable() throws {
        let image = FeedImage(id: UUID(), description: nil, location: "here", url: anyURL)
        let decoded = try JSONDecoder().decode(FeedImage.self, from: JSONEncoder().encode(image))
        #expect(decoded == image)
    }
}

@Suite("FilmsMapper")
struct FilmsMapperTests {
    @Test(arguments: nonOKStatuses)
    func map_throwsInvalidDataOnNon200HTTPResponse(status: Int) throws {
        #expect(throws: RemoteLoaderError.invalidData) {
            try FilmsMapper.map(json("[]"), from: response(status))
        }
    }

    @Test(arguments: ["", "[", #"{"films":[]}"#, #"[{"id":"1","title":"t","description":"d","image":"http://x.test/i"}]"#])
    func map_throwsInvalidDataOn200HTTPResponseWithInvalidJSON(body: String) throws {
        #expect(throws: RemoteLoaderError.invalidData) {
            try FilmsMapper.map(json(body), from: response(200))
        }
    }

    @Test(arguments: ["1", "2baf70d1", "", "2baf70d1-42bb-4437-b551-e5fed5a87abz"])
    func map_throwsInvalidDataOnAFilmWhoseIdIsNotAUUID(id: String) throws {
        let body = #"[{"id":"\#(id)","title":"t","description":"d","image":"http://x.test/i","url":"http://x.test/f"}]"#
        #expect(throws: RemoteLoaderError.invalidData) {
            try FilmsMapper.map(json(body), from: response(200))
        }
    }

    @Test
    func map_deliversNoFilmsOn200HTTPResponseWithEmptyJSONArray() throws {
        #expect(try FilmsMapper.map(json("[]"), from: response(200)) == [])
    }

    @Test
    func map_deliversFilmsOn200HTTPResponseWithJSONFilms() throws {
        let body = json("""
        [{"id":"2baf70d1-42bb-4437-b551-e5fed5a87abe","title":"Castle in the Sky","original_title":"天空の城ラピュタ",
          "description":"The orphan Sheeta...","image":"https://image.test/castle.jpg",
          "url":"https://ghibli.test/films/2baf70d1-42bb-4437-b551-e5fed5a87abe","release_date":"1986"}]
        """)
        let films = try FilmsMapper.map(body, from: response(200))
        #expect(films == [Film(
            id: "2baf70d1-42bb-4437-b551-e5fed5a87abe",
            title: "Castle in the Sky",
            description: "The orphan Sheeta...",
            image: try #require(URL(string: "https://image.test/castle.jpg")),
            url: try #require(URL(string: "https://ghibli.test/films/2baf70d1-42bb-4437-b551-e5fed5a87abe"))
        )])
    }
}

@Suite("GenresMapper")
struct GenresMapperTests {
    @Test(arguments: nonOKStatuses)
    func map_throwsInvalidDataOnNon200HTTPResponse(status: Int) throws {
        #expect(throws: RemoteLoaderError.invalidData) {
            try GenresMapper.map(json(#"{"genres":[]}"#), from: response(status))
        }
    }

    @Test(arguments: ["", "{}", #"{"genres":[{"id":"1","name":"Arts"}]}"#, #"[{"id":1,"name":"Arts"}]"#])
    func map_throwsInvalidDataOn200HTTPResponseWithInvalidJSON(body: String) throws {
        #expect(throws: RemoteLoaderError.invalidData) {
            try GenresMapper.map(json(body), from: response(200))
        }
    }

    @Test
    func map_deliversGenresOn200HTTPResponseWithJSONGenres() throws {
        let body = json(#"{"genres":[{"id":144,"name":"Personal Finance","parent_id":67},{"id":151,"name":"Locally Focused"}]}"#)
        #expect(try GenresMapper.map(body, from: response(200)) == [
            Genre(id: 144, name: "Personal Finance"), Genre(id: 151, name: "Locally Focused"),
        ])
    }
}

@Suite("VersesMapper")
struct VersesMapperTests {
    @Test(arguments: nonOKStatuses)
    func map_throwsInvalidDataOnNon200HTTPResponse(status: Int) throws {
        #expect(throws: RemoteLoaderError.invalidData) {
            try VersesMapper.map(json("[]"), from: response(status))
        }
    }

    @Test(arguments: ["", "null", #"[{"scripture":"John 3:16","distance":"near","text":"For God..."}]"#])
    func map_throwsInvalidDataOn200HTTPResponseWithInvalidJSON(body: String) throws {
        #expect(throws: RemoteLoaderError.invalidData) {
            try VersesMapper.map(json(body), from: response(200))
        }
    }

    @Test
    func map_deliversVersesOn200HTTPResponseWithJSONVerses() throws {
        let body = json(#"[{"scripture":"John 3:16","distance":0.25,"text":"For God so loved"},{"scripture":"1 John 4:8","distance":1,"text":"God is love"}]"#)
        #expect(try VersesMapper.map(body, from: response(200)) == [
            Verse(scripture: "John 3:16", distance: 0.25, text: "For God so loved"),
            Verse(scripture: "1 John 4:8", distance: 1, text: "God is love"),
        ])
    }
}

@Suite("PeoplePageMapper")
struct PeoplePageMapperTests {
    @Test(arguments: nonOKStatuses)
    func map_throwsInvalidDataOnNon200HTTPResponse(status: Int) throws {
        let body = json(#"{"count":0,"next":null,"previous":null,"results":[]}"#)
        #expect(throws: RemoteLoaderError.invalidData) {
            try PeoplePageMapper.map(body, from: response(status))
        }
    }

    @Test(arguments: ["", "[]", #"{"count":1,"results":[{"height":"172"}]}"#, #"{"next":null,"results":[]}"#])
    func map_throwsInvalidDataOn200HTTPResponseWithInvalidJSON(body: String) throws {
        #expect(throws: RemoteLoaderError.invalidData) {
            try PeoplePageMapper.map(json(body), from: response(200))
        }
    }

    @Test
    func map_deliversAPageOn200HTTPResponseWithJSONPage() throws {
        let body = json("""
        {"count":82,"next":"https://swapi.test/api/people/?search=a&page=2","previous":null,
         "results":[
           {"name":"Luke Skywalker","height":"172","mass":"77","birth_year":"19BBY","gender":"male","films":[]},
           {"name":"C-3PO"}
         ]}
        """)
        let next = try #require(URL(string: "https://swapi.test/api/people/?search=a&page=2"))
        let page = try PeoplePageMapper.map(body, from: response(200))
        #expect(page == PeoplePage(
            count: 82,
            next: next,
            previous: nil,
            results: [
                Person(name: "Luke Skywalker", height: "172", mass: "77", birthYear: "19BBY", gender: "male"),
                Person(name: "C-3PO"),
            ]
        ))
    }

    @Test
    func map_deliversALastPageWhenNextIsAbsent() throws {
        let body = json(#"{"count":1,"previous":"https://swapi.test/api/people/?page=1","results":[{"name":"Yoda"}]}"#)
        let page = try PeoplePageMapper.map(body, from: response(200))
        #expect(page.next == nil)
        #expect(page.previous == URL(string: "https://swapi.test/api/people/?page=1"))
    }
}

@Suite("FeedImageDataMapper")
struct FeedImageDataMapperTests {
    @Test(arguments: nonOKStatuses)
    func map_throwsInvalidDataOnNon200HTTPResponse(status: Int) throws {
        #expect(throws: RemoteLoaderError.invalidData) {
            try FeedImageDataMapper.map(Data("image".utf8), from: response(status))
        }
    }

    @Test
    func map_throwsInvalidDataOn200HTTPResponseWithEmptyData() throws {
        #expect(throws: RemoteLoaderError.invalidData) {
            try FeedImageDataMapper.map(Data(), from: response(200))
        }
    }

    @Test
    func map_deliversDataOn200HTTPResponseWithNonEmptyData() throws {
        let data = Data([0x89, 0x50, 0x4E, 0x47])
        #expect(try FeedImageDataMapper.map(data, from: response(200)) == data)
    }
}

/// A body that breaks its contract is refused with where it breaks it, in words; errors still
/// compare by kind, as the specs above ask.
@Suite("Why a response is invalid")
struct InvalidDataReasonTests {
    static func reason(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as RemoteLoaderError {
            return error.reason
        } catch {
            return "\(error)"
        }
    }

    @Test(arguments: [
        ("{}", #"missing "genres" at the top level"#),
        (#"{"genres":{}}"#, #"expected an array at "genres""#),
        (#"{"genres":[{"id":1}]}"#, #"missing "name" at "genres[0]""#),
        (#"{"genres":[{"id":"one","name":"Arts"}]}"#, #"expected a number at "genres[0].id""#),
        (#"{"genres":null}"#, #"expected an array at "genres", found null"#),
        ("not json", "the body is not JSON"),
        ("[]", "expected an object at the top level"),
    ])
    func map_saysWhereTheBodyBreaksTheContract(body: String, reason: String) throws {
        let response = response(200)
        #expect(Self.reason { try GenresMapper.map(json(body), from: response) } == reason)
    }

    /// Valid JSON nested deeper than the scanner's limit, and bytes that are not UTF-8, are
    /// refused saying so, not as "not JSON" (which a reader would take for a broken server).
    @Test
    func map_saysABodyIsTooDeep_orNotUTF8_forContractsAndForAnyJSON() throws {
        let response = response(200)
        func nested(_ depth: Int) -> Data { Data((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8) }
        let tooDeep = "the body nests arrays and objects deeper than 512 levels"

        #expect(Self.reason { try GenresMapper.map(nested(1000), from: response) } == tooDeep)
        #expect(Self.reason { try JSONItemsMapper.map(nested(1000), from: response) } == tooDeep)
        #expect(Self.reason { try JSONItemsMapper.map(nested(513), from: response) } == tooDeep)
        #expect(Self.reason { try JSONItemsMapper.map(nested(512), from: response) } == nil, "512 levels are within the limit")
        #expect(Self.reason { try JSONItemsMapper.map(Data([0x22, 0xFF, 0x22]), from: response) } == "the body is not UTF-8")
        #expect(Self.reason { try JSONItemsMapper.map(Data("[1,]".utf8), from: response) } == "the body is not JSON")
    }

    @Test(arguments: nonOKStatuses)
    func map_saysTheStatus_andStillEqualsInvalidData(status: Int) throws {
        let response = response(status)
        #expect(Self.reason { try GenresMapper.map(json(#"{"genres":[]}"#), from: response) } == "HTTP status \(status), not 200")
        #expect(throws: RemoteLoaderError.invalidData) { try GenresMapper.map(json(#"{"genres":[]}"#), from: response) }
        #expect(RemoteLoaderError.status(status) != RemoteLoaderError.connectivity)
    }

    @Test
    func filmsMapper_namesTheFilmWhoseIdIsNotAUUID() throws {
        let body = json(#"[{"id":"2baf70d1-42bb-4437-b551-e5fed5a87abe","title":"a","description":"b","image":"http://x.test/1","url":"http://x.test/2"},{"id":"nope","title":"a","description":"b","image":"http://x.test/1","url":"http://x.test/2"}]"#)
        let response = response(200)
        #expect(Self.reason { try FilmsMapper.map(body, from: response) } == #"the id at "[1].id" is not a UUID"#)
    }

    @Test
    func description_readsAsOneLine() {
        #expect(RemoteLoaderError.status(404).description == "remote sent invalid data: HTTP status 404, not 200")
        #expect(RemoteLoaderError.connectivity.description == "remote unreachable")
        #expect(RemoteLoaderError(.connectivity, reason: "certificate not trusted: x").description == "remote certificate not trusted: x")
        #expect(RemoteLoaderError.invalidData.description == "remote sent invalid data")
    }
}
