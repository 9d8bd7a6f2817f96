import ArgumentParser
import CacheLogKit
import Foundation

/// `--client-writes KEY`: COUNT writes of genres to KEY through the library's client
/// (`FeedResource.write`), as an app in another process writes, printing "written N" as each
/// returns. A write that throws ends the run, with its error.
struct ClientWriter {
    let path: String
    let key: String
    let count: Int

    func write() async throws {
        let client = try CacheClient(directory: path)
        // Nothing is fetched: a write sends no request.
        guard let url = URL(string: "http://127.0.0.1:9/genres.json") else { throw ValidationError("no URL for the feed") }
        let genres = client.feed(key, at: url, contract: .genres)
        for index in 0..<count {
            try await genres.write([Genre(id: index, name: "written \(index)")])
            FileHandle.standardOutput.write(Data("written \(index)\n".utf8))
        }
    }
}
