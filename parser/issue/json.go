package issue

import (
	"encoding/json"
	"fmt"

	"github.com/coroner-dev/coroner/parser/facts"
)

// The JSON inputs:
//
//   - `gh issue view N --json title,body,comments` (and any subset holding
//     body): the body, then each comment in the order gh lists them
//     (oldest first);
//   - the REST API's issue object (`gh api repos/O/R/issues/N`) and its
//     comment list (`gh api repos/O/R/issues/N/comments`, an array);
//   - a webhook or Actions event payload of an `issues` or
//     `issue_comment` event: the issue's body, then the comment the event
//     is about, if any.
//
// Each body is a markdown document. Titles, authors and other fields are
// not evidence and are not read.

type jsonComment struct {
	Body *string `json:"body"`
}

// jsonIssue is gh's issue JSON or the REST issue object, whose
// "comments" is a count, not a list.
type jsonIssue struct {
	Title    *string         `json:"title"`
	Body     *string         `json:"body"`
	Comments json.RawMessage `json:"comments"`
}

type jsonEvent struct {
	Action  *string      `json:"action"`
	Issue   *jsonIssue   `json:"issue"`
	Comment *jsonComment `json:"comment"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// readJSON decodes an issue, comment list or event payload into its
// documents; ok is false for JSON of another shape.
func readJSON(data []byte) (docs []document, kind facts.Kind, ok bool) {
	var probe any
	if json.Unmarshal(data, &probe) != nil {
		return nil, "", false
	}
	switch probe.(type) {
	case []any:
		var list []jsonComment
		if json.Unmarshal(data, &list) != nil || len(list) == 0 {
			return nil, "", false
		}
		for i, c := range list {
			if c.Body == nil {
				return nil, "", false
			}
			docs = append(docs, document{name: fmt.Sprintf("comment %d", i+1), text: []byte(*c.Body)})
		}
		return docs, facts.KindGitHubIssue, true
	case map[string]any:
	default:
		return nil, "", false
	}
	var ev jsonEvent
	if json.Unmarshal(data, &ev) == nil && ev.Action != nil && ev.Issue != nil && (ev.Issue.Title != nil || ev.Issue.Body != nil) {
		docs = append(docs, document{name: "body", text: []byte(str(ev.Issue.Body))})
		if ev.Comment != nil && ev.Comment.Body != nil {
			docs = append(docs, document{name: "comment", text: []byte(*ev.Comment.Body)})
		}
		return docs, facts.KindGitHubEvent, true
	}
	var is jsonIssue
	if json.Unmarshal(data, &is) != nil || is.Body == nil && is.Title == nil {
		return nil, "", false
	}
	var comments []jsonComment
	if len(is.Comments) > 0 && is.Comments[0] == '[' && json.Unmarshal(is.Comments, &comments) != nil {
		return nil, "", false
	}
	if is.Title == nil && comments == nil {
		return nil, "", false // a "body" alone is not enough to call it an issue
	}
	docs = append(docs, document{name: "body", text: []byte(str(is.Body))})
	for i, c := range comments {
		if c.Body != nil {
			docs = append(docs, document{name: fmt.Sprintf("comment %d", i+1), text: []byte(*c.Body)})
		}
	}
	return docs, facts.KindGitHubIssue, true
}
