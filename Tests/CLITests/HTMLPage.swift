import Foundation

/// Reads what the report tests check out of a page's HTML (as written, or as chromium dumps the
/// DOM after the script ran): by the attributes the page promises, not by its layout.
struct HTMLPage {
    let html: String

    init(_ html: String) { self.html = html }

    func count(_ text: String) -> Int { html.components(separatedBy: text).count - 1 }

    /// An attribute of the root `<html>` element; nil when it is not there.
    func rootAttribute(_ name: String) -> String? {
        guard let tag = element("html") else { return nil }
        return Self.attribute(name, in: tag)
    }

    /// The opening tag that starts with `<` + `prefix`.
    func element(_ prefix: String) -> String? {
        guard let start = html.range(of: "<" + prefix) else { return nil }
        guard let end = html[start.upperBound...].firstIndex(of: ">") else { return nil }
        return String(html[start.lowerBound...end])
    }

    /// The timeline's key labels, in order.
    var labels: [String] {
        segments(after: "<span class=\"label\"").map { segment in
            let text = segment.drop { $0 != ">" }.dropFirst()
            return Self.unescaped(String(text.prefix { $0 != "<" }))
        }
    }

    /// The summary table's keys, in order.
    var tableKeys: [String] { tableRows.map(\.key) }

    /// Events in the window per key, as the table counts them.
    var eventCounts: [String: Int] {
        Dictionary(tableRows.map { ($0.key, Int(Self.attribute("data-events", in: $0.tag) ?? "") ?? -1) }, uniquingKeysWith: { first, _ in first })
    }

    /// Each key's state at the slider's moment.
    var stateAtMoment: [String: String] {
        Dictionary(tableRows.map { row in
            let cell = row.body.range(of: "<td class=\"now\"").map { String(row.body[$0.lowerBound...].prefix { $0 != ">" }) } ?? ""
            return (row.key, Self.attribute("data-state", in: cell) ?? "?")
        }, uniquingKeysWith: { first, _ in first })
    }

    /// Seconds fresh, stale and missing, from the table's cells.
    func seconds(of key: String) -> [Double] {
        guard let row = tableRows.first(where: { $0.key == key }) else { return [] }
        return row.body.components(separatedBy: "data-seconds=\"").dropFirst().compactMap { Double($0.prefix { $0 != "\"" }) }
    }

    /// How many bands of each state the key's timeline row draws.
    func bands(of key: String) -> [String: Int] { paths(of: key, kind: "band") }

    /// How many marks of each kind the key's timeline row draws.
    func marks(of key: String) -> [String: Int] { paths(of: key, kind: "mark") }

    /// The page's embedded data.
    func data() throws -> [String: Any] {
        let opening = "<script type=\"application/json\" id=\"history\">"
        guard let start = html.range(of: opening), let end = html[start.upperBound...].range(of: "</script>") else { return [:] }
        return try JSONSerialization.jsonObject(with: Data(html[start.upperBound..<end.lowerBound].utf8)) as? [String: Any] ?? [:]
    }

    private func paths(of key: String, kind: String) -> [String: Int] {
        let rows = segments(after: "<div class=\"row\"")
        guard let row = rows.first(where: { Self.attribute("data-key", in: String($0.prefix { $0 != ">" })) == key }) else { return [:] }
        var counts: [String: Int] = [:]
        for path in row.components(separatedBy: "<path class=\"\(kind) ").dropFirst() {
            let tag = String(path.prefix { $0 != ">" })
            counts[String(tag.prefix { $0 != "\"" })] = Int(Self.attribute("data-count", in: tag) ?? "")
        }
        return counts
    }

    private var tableRows: [(key: String, tag: String, body: String)] {
        segments(after: "<tr data-key=").map { segment in
            let tag = "<tr data-key=" + segment.prefix { $0 != ">" }
            return (Self.attribute("data-key", in: tag) ?? "", tag, segment.components(separatedBy: "</tr>").first ?? "")
        }
    }

    /// The text after each occurrence of `marker`, up to the next one.
    private func segments(after marker: String) -> [String] {
        Array(html.components(separatedBy: marker).dropFirst())
    }

    private static func attribute(_ name: String, in tag: String) -> String? {
        guard let start = tag.range(of: " \(name)=\"") else { return nil }
        return unescaped(String(tag[start.upperBound...].prefix { $0 != "\"" }))
    }

    private static func unescaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&nbsp;", with: "\u{a0}").replacingOccurrences(of: "&amp;", with: "&")
    }
}
