import FeedAPI
import CacheLogReports
import FeedCacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// JSON text that goes into the output as it is: a feed item or a payload already in its final
/// form (see ``JSONScanner``). Only ``JSONOutput`` can write it.
struct RawJSON: Encodable {
    let bytes: [UInt8]

    init(_ text: String) { bytes = Array(text.utf8) }

    /// A stored payload: its own JSON when it is JSON, else a base64 string.
    init(payload: Data) { bytes = Array(JSONText.payload(payload).utf8) }

    func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath, debugDescription: "raw JSON needs JSONOutput"))
    }
}
