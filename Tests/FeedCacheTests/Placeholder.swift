import Testing
@Test func placeholder_FeedCacheTests() { #expect(Bool(true)) }
