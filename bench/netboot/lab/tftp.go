package lab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// TFTPGet reads name from server over c (a socket of the caller's, made
// in the clients' namespace) and writes it to w: RRQ with blksize and
// tsize, and windowsize when window > 1 (RFC 7440: the client ACKs the
// last block of each window, or the last block it has in order when a
// block is missing or nothing comes for timeout). Block numbers wrap.
// It returns the bytes written.
func TFTPGet(c *net.UDPConn, server *net.UDPAddr, name string, blksize, window int, timeout time.Duration, retries int, w io.Writer) (int64, error) {
	req := binary.BigEndian.AppendUint16(nil, 1)
	req = append(append(req, name...), 0)
	req = append(req, "octet\x00blksize\x00"+strconv.Itoa(blksize)+"\x00tsize\x000\x00"...)
	if window > 1 {
		req = append(req, "windowsize\x00"+strconv.Itoa(window)+"\x00"...)
	}
	blk, win := 512, 1
	var peer *net.UDPAddr
	last := req // what to send again on a timeout
	dst := server
	send := func(b []byte) error { _, err := c.WriteToUDP(b, dst); return err }
	ack := func(n uint16) error {
		last = binary.BigEndian.AppendUint16([]byte{0, 4}, n)
		return send(last)
	}
	if err := send(req); err != nil {
		return 0, err
	}
	buf := make([]byte, 4+65464)
	var got int64
	expect := uint16(1) // the next block wanted
	inWindow := 0
	tries := 0
	for {
		c.SetReadDeadline(time.Now().Add(timeout))
		n, from, err := c.ReadFromUDP(buf)
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				return got, err
			}
			if tries++; tries > retries {
				return got, fmt.Errorf("get %s: no answer after %d tries", name, tries)
			}
			if peer != nil {
				// Ask from the first block missing.
				if err := ack(expect - 1); err != nil {
					return got, err
				}
				inWindow = 0
			} else if err := send(last); err != nil {
				return got, err
			}
			continue
		}
		if peer == nil {
			peer, dst = from, from
		} else if !from.IP.Equal(peer.IP) || from.Port != peer.Port {
			continue
		}
		if n < 4 {
			continue
		}
		switch binary.BigEndian.Uint16(buf) {
		case 6: // OACK
			f := strings.Split(string(buf[2:n]), "\x00")
			for i := 0; i+1 < len(f); i += 2 {
				v, _ := strconv.Atoi(f[i+1])
				switch strings.ToLower(f[i]) {
				case "blksize":
					blk = v
				case "windowsize":
					win = v
				}
			}
			tries = 0
			if err := ack(0); err != nil {
				return got, err
			}
		case 3: // DATA
			if binary.BigEndian.Uint16(buf[2:]) != expect {
				// Out of order: ask again from the first block missing.
				if err := ack(expect - 1); err != nil {
					return got, err
				}
				inWindow = 0
				continue
			}
			tries = 0
			if _, err := w.Write(buf[4:n]); err != nil {
				return got, err
			}
			got += int64(n - 4)
			expect++
			inWindow++
			if n-4 < blk {
				return got, ack(expect - 1)
			}
			if inWindow == win {
				inWindow = 0
				if err := ack(expect - 1); err != nil {
					return got, err
				}
			}
		case 5: // ERROR
			return got, fmt.Errorf("get %s: server error %d %q", name, binary.BigEndian.Uint16(buf[2:]), strings.TrimRight(string(buf[4:n]), "\x00"))
		}
	}
}
