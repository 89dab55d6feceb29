package ui

import "strings"

// An answer as it streams: its complete blocks rendered as the finished
// answer shows them, the open one raw (blocks.go).

// streamWrap is a streaming answer as drawn: a header, the complete
// blocks rendered, then the open block's text word-wrapped as it arrives.
// Rows of the open block that are full never change, so each delta
// re-wraps only its unfinished last row; they are indented by glamour's
// margin, so that the text stays where it is when the block is rendered.
// A block is rendered once, when the line that begins the next one comes.
type streamWrap struct {
	width int // wrapping width
	fitW  int // the pane's width
	// lines are the header, the complete blocks' lines (up to done), a
	// blank line after them, and the open block's full rows.
	lines  []string
	done   int
	blocks int // complete blocks that have lines
	cur    string
	scan   blockScan
	open   int // where the open block begins in the text
	next   int // where the first line not yet scanned begins
}

func newStreamWrap(width, fitW int, header string) streamWrap {
	return streamWrap{width: width, fitW: fitW, lines: []string{fit(header, fitW)}, done: 1}
}

// add wraps s, more of the open block's text.
func (w *streamWrap) add(s string) {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			w.cur += s
			break
		}
		w.cur += s[:i]
		w.finish(wrapRows(w.cur, w.width))
		w.cur = ""
		s = s[i+1:]
	}
	if rows := wrapRows(w.cur, w.width); len(rows) > 1 {
		w.finish(rows[:len(rows)-1])
		w.cur = rows[len(rows)-1]
	}
}

func (w *streamWrap) finish(rows []string) {
	for _, r := range rows {
		w.lines = append(w.lines, fit(markdownMargin+r, w.fitW))
	}
}

// view returns the header, the complete blocks, the open block's full rows
// and its unfinished one. It shares the lines rather than copying them: it
// is valid until the next add.
func (w *streamWrap) view() []string {
	out := w.lines[:len(w.lines):cap(w.lines)]
	for _, r := range wrapRows(w.cur, w.width) {
		out = append(out, fit(markdownMargin+r, w.fitW))
	}
	return append(out, strings.Repeat(" ", w.fitW))
}

// complete reads the whole lines of text (the answer so far) it has not
// read yet and returns the blocks they complete, if any.
func (w *streamWrap) complete(text string) []string {
	var blocks []string
	for w.next < len(text) {
		end := strings.IndexByte(text[w.next:], '\n')
		if end < 0 {
			break
		}
		if w.scan.line(text[w.next : w.next+end]) {
			blocks = append(blocks, text[w.open:w.next])
			w.open = w.next
		}
		w.next += end + 1
	}
	return blocks
}

// commit puts complete blocks' lines in place of the open block's rows
// and wraps open, the text of the block now open, raw.
func (w *streamWrap) commit(blocks [][]string, open string) {
	w.lines = w.lines[:w.done]
	for _, b := range blocks {
		from := len(w.lines)
		w.lines, w.blocks = addBlock(w.lines, w.blocks, b)
		for i := from; i < len(w.lines); i++ {
			w.lines[i] = fit(w.lines[i], w.fitW)
		}
	}
	w.done = len(w.lines)
	if w.blocks > 0 {
		w.lines = append(w.lines, fit("", w.fitW))
	}
	w.cur = ""
	w.add(open)
}

// feed adds a delta of the streaming answer it to what is drawn of it:
// the blocks it completes are rendered, the open one's text is wrapped.
func (c *chat) feed(it *chatItem, delta string) {
	s := &it.stream
	if strings.IndexByte(delta, '\n') < 0 {
		s.add(delta)
		return
	}
	text := it.buf.String()
	done := s.complete(text)
	if len(done) == 0 {
		s.add(delta)
		return
	}
	rendered := make([][]string, len(done))
	for i, b := range done {
		rendered[i] = c.block(b, c.textWidth())
	}
	s.commit(rendered, text[s.open:])
}

// restream draws the streaming answer it again from its text, at the
// pane's width.
func (c *chat) restream(it *chatItem) {
	it.stream = newStreamWrap(c.streamWidth(), c.width, streamHeader)
	c.feed(it, it.buf.String())
}

// streamed is what the drawing of a streamed answer leaves to the finished
// one: the complete blocks' lines, fitted to the pane, up to at in the
// text (nil: nothing).
type streamed struct {
	lines        []string
	blocks, at   int
	width, paneW int
}

// handOver returns the complete blocks of the streaming item it, when the
// decision's text goes on from the text they were read from.
func (c *chat) handOver(it *chatItem, text string) *streamed {
	s := &it.stream
	if s.blocks == 0 || s.width != c.streamWidth() || s.fitW != c.width || !strings.HasPrefix(text, it.buf.String()[:s.next]) {
		return nil
	}
	return &streamed{lines: append([]string(nil), s.lines[1:s.done]...), blocks: s.blocks, at: s.open, width: c.textWidth(), paneW: c.width}
}

// answerLines renders a finished answer's text at width, taking the
// blocks rendered while it streamed when they are at this width. The
// lines are the same either way: the blocks are the same, rendered alike.
func (c *chat) answerLines(it *chatItem, width int) []string {
	pre := it.pre
	it.pre = nil
	if pre == nil || pre.width != width || pre.paneW != c.width {
		return c.markdown(it.text, width)
	}
	lines, n := pre.lines, pre.blocks
	for _, b := range splitBlocks(it.text[pre.at:]) {
		lines, n = addBlock(lines, n, c.block(b, width))
	}
	return lines
}
