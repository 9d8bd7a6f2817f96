import FeedAPI
import Foundation
import Testing

@Suite("HTTPResponse")
struct HTTPResponseTests {
    @Test
    func valueForHeaderField_ignoresTheCaseOfTheName() {
        let response = response(200, headers: ["etag": #""v1""#, "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"])
        #expect(response.value(forHTTPHeaderField: "ETag") == #""v1""#)
        #expect(response.value(forHTTPHeaderField: "last-modified") == "Tue, 01 Dec 2026 10:00:00 GMT")
        #expect(response.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test
    func validators_areReadFromAResponseWhateverTheCaseOfItsHeaderNames() {
        let validators = HTTPValidators(response: response(200, headers: ["ETAG": "W/\"7\"", "last-modified": "yesterday"]))
        #expect(validators == HTTPValidators(etag: "W/\"7\"", lastModified: "yesterday"))
        #expect(HTTPValidators(response: response(200)).isEmpty)
    }
}
