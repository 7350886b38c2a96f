import Testing
import TransportCore

@testable import HTTPIngress

/// The `listen` and `metrics_listen` settings: `host:port`, `[IPv6]:port`, or a Unix
/// socket path; and which of them only this machine can reach.
@Suite("HTTPListenAddress")
struct HTTPListenAddressTests {
    @Test(
        "host:port and [IPv6]:port parse",
        arguments: [
            ("127.0.0.1:8080", HTTPListenAddress.host("127.0.0.1", port: 8080)),
            ("[::1]:8080", .host("::1", port: 8080)),
            ("localhost:8080", .host("localhost", port: 8080)),
            ("0.0.0.0:8080", .host("0.0.0.0", port: 8080)),
            ("192.168.1.1:80", .host("192.168.1.1", port: 80)),
            ("[::]:9464", .host("::", port: 9464)),
            ("example.org:1", .host("example.org", port: 1)),
            ("127.0.0.1:65535", .host("127.0.0.1", port: 65535)),
            ("[fe80::1:2]:443", .host("fe80::1:2", port: 443)),
        ]
    )
    func hostAndPort(text: String, expected: HTTPListenAddress) {
        #expect(HTTPListenAddress(text) == expected)
    }

    @Test(
        "socket paths parse: absolute, ./relative, or after unix:",
        arguments: [
            ("unix:/x", HTTPListenAddress.unixSocket("/x")),
            ("unix:relative.sock", .unixSocket("relative.sock")),
            ("/run/x.sock", .unixSocket("/run/x.sock")),
            ("/run/xmpp-bridge/http.sock", .unixSocket("/run/xmpp-bridge/http.sock")),
            ("./http.sock", .unixSocket("./http.sock")),
            ("/run/odd:name.sock", .unixSocket("/run/odd:name.sock")),
        ]
    )
    func socketPaths(text: String, expected: HTTPListenAddress) {
        #expect(HTTPListenAddress(text) == expected)
    }

    @Test(
        "anything else is refused",
        arguments: [
            "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:abc", "127.0.0.1:", "127.0.0.1", "127.0.0.1:99999999999999999999",
            "127.0.0.1:-1", ":8080", "localhost", "", "unix:", "http.sock",
            "::1:8080", "fe80::1:8080", "::1", "[::1]", "[::1]8080", "[]:8080", "[::1:8080", "::1]:8080",
            "my host:8080", "a/b:8080",
        ]
    )
    func refused(text: String) {
        #expect(HTTPListenAddress(text) == nil)
    }

    @Test(
        "only loopback addresses and sockets are local-only",
        arguments: [
            ("127.0.0.1:8080", true), ("127.255.0.1:8080", true), ("127.0.0.2:1", true), ("localhost:8080", true),
            ("[::1]:8080", true), ("[0:0:0:0:0:0:0:1]:8080", true), ("unix:/x", true), ("/run/x.sock", true), ("./x.sock", true),
            ("0.0.0.0:8080", false), ("192.168.1.1:80", false), ("[::]:8080", false), ("example.org:80", false),
            ("127.0.0.256:8080", false), ("127.0.0:8080", false), ("127.0.0.1.5:8080", false), ("128.0.0.1:80", false),
            ("127.0.0.:80", false), ("localhost.example.org:80", false), ("[::2]:80", false),
        ]
    )
    func localOnly(text: String, expected: Bool) throws {
        let address = try #require(HTTPListenAddress(text))
        #expect(address.isLocalOnly == expected)
    }

    @Test("the description writes IPv6 hosts in brackets again")
    func description() {
        #expect(HTTPListenAddress.host("::1", port: 8080).description == "[::1]:8080")
        #expect(HTTPListenAddress.host("127.0.0.1", port: 8080).description == "127.0.0.1:8080")
        #expect(HTTPListenAddress.unixSocket("/run/x.sock").description == "/run/x.sock")
        #expect(HTTPListenAddress("[::1]:9464")?.description == "[::1]:9464")
    }
}
