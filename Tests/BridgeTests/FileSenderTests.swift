import Testing

@testable import Bridge
@testable import BridgeCommand

/// `send --file`'s media types (the slot request's `content-type` and the PUT's).
@Suite("FileSender")
struct FileSenderTests {
    @Test("media types by extension, any case; a dot in a folder name or none at all is octet-stream")
    func mediaTypes() {
        #expect(FileSender.mediaType(of: "/var/log/build.log") == "text/plain")
        #expect(FileSender.mediaType(of: "Photo.JPG") == "image/jpeg")
        #expect(FileSender.mediaType(of: "/tmp/a.b/notes") == "application/octet-stream")
        #expect(FileSender.mediaType(of: ".bashrc") == "application/octet-stream")
        #expect(FileSender.mediaType(of: "archive.unknownext") == "application/octet-stream")
    }
}
