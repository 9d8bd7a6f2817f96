// One import for an app: the entry point (`CacheClient`) and every part it composes, which stay
// public for whoever wants to compose their own (as Nuke's pipeline leaves its loaders public).
@_exported import CacheLog
@_exported import FeedAPI
@_exported import FeedCache
@_exported import FeedCacheLog
