#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CacheLog
import FeedCache
import FeedCacheLog

extension HistoryReport {
    /// The data the page embeds and draws from, as JSON on one line. The window is there twice:
    /// as dates, and as `start` (seconds since 1970) and `span` (seconds) for the page's
    /// arithmetic. Written by hand: a report of a million events holds thousands of numbers per
    /// key, and the shape is fixed.
    func json() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(keys.count * 2_048 + 512)
        out += Array(#"{"from":"#.utf8)
        JSONText.appendDate(window.start, to: &out)
        out += Array(#","to":"#.utf8)
        JSONText.appendDate(window.end, to: &out)
        out += Array(#","start":\#(JSONText.number(window.start.timeIntervalSince1970)),"span":\#(JSONText.number(window.duration))"#.utf8)
        out += Array(#","columns":\#(columns),"selection":"#.utf8)
        JSONText.appendString(selection, to: &out)
        out += Array(#","judgedBy":"#.utf8)
        JSONText.appendString(judgedBy, to: &out)
        out += Array(#","generatedAt":"#.utf8)
        JSONText.appendDate(generatedAt, to: &out)
        out += Array(#","keys":["#.utf8)
        for (index, key) in keys.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            Self.append(key, to: &out)
        }
        out += Array("]}".utf8)
        return out
    }

    private static func append(_ key: Key, to out: inout [UInt8]) {
        out += Array(#"{"key":"#.utf8)
        JSONText.appendString(key.key, to: &out)
        out += Array(#","puts":\#(key.puts),"deletes":\#(key.deletes),"expires":\#(key.expires),"corrupt":\#(key.corrupt),"lastRefresh":"#.utf8)
        if let lastRefresh = key.lastRefresh { JSONText.appendDate(lastRefresh, to: &out) } else { out += Array("null".utf8) }
        out += Array(#","fresh":\#(JSONText.number(key.fresh)),"stale":\#(JSONText.number(key.stale)),"missing":\#(JSONText.number(key.missing))"#.utf8)
        out += Array(#","state":\#(key.state.rawValue),"bands":["#.utf8)
        for (index, value) in key.bands.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += Array(JSONText.number(value).utf8)
        }
        out += Array(#"],"marks":["#.utf8)
        for (index, mark) in key.marks.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += Array("[\(JSONText.number(mark.offset)),\(mark.kind.rawValue),\(mark.seq),".utf8)
            JSONText.appendString(mark.detail, to: &out)
            out.append(UInt8(ascii: "]"))
        }
        out += Array(#"],"counts":"#.utf8)
        JSONText.appendString(key.counts, to: &out)
        out += Array(#","overflow":["#.utf8)
        out += Array(key.overflow.map(String.init).joined(separator: ",").utf8)
        out += Array("]}".utf8)
    }
}
