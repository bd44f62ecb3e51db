// Command cloud-tasks-emulator serves the Cloud Tasks v2 gRPC API in memory and dispatches HTTP
// target tasks over real HTTP, so Quire's Cloud Tasks adapter is tested against the wire API the
// @google-cloud/tasks client speaks. The third-party Cloud Tasks emulators are not available from
// the module proxy this project builds from, so this one is built from Google's own protos
// (cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb).
//
//	cloud-tasks-emulator -host 127.0.0.1 -port 8123 [-initial-queue projects/p/locations/l/queues/q]
//
// It prints "listening on HOST:PORT" once the server accepts connections and stops on SIGINT or
// SIGTERM. What it does, as Cloud Tasks does:
//
//   - queues: Create, Get, List, Delete, Purge, Pause, Resume;
//   - tasks: Create, Get, List, Delete, Run, with HTTP targets (method, headers, body);
//   - a task runs at its schedule_time; a 2xx answer completes it, anything else (or no answer
//     within the dispatch deadline, default 10 minutes) is retried by the queue's retry config
//     (min_backoff 0.1 s doubling max_doublings times, capped at max_backoff, at most
//     max_attempts dispatches; -1 is unlimited);
//   - a task name, once used, cannot be used again (ALREADY_EXISTS), even after the task completed
//     or was deleted: that is what makes a named CreateTask idempotent;
//   - the request carries X-CloudTasks-QueueName, X-CloudTasks-TaskName,
//     X-CloudTasks-TaskRetryCount, X-CloudTasks-TaskExecutionCount and X-CloudTasks-TaskETA.
//
// Not emulated: App Engine targets, OIDC and OAuth tokens (no Authorization header is added),
// rate limits other than max_concurrent_dispatches, queue-level HTTP target overrides, CMEK, IAM.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	pb "cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

var (
	queueName = regexp.MustCompile(`^projects/[A-Za-z0-9:.-]+/locations/[A-Za-z0-9-]+/queues/[A-Za-z0-9-]{1,100}$`)
	taskID    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,500}$`)
)

const defaultDeadline = 10 * time.Minute

type queue struct {
	pb      *pb.Queue
	tasks   map[string]*task
	slots   chan struct{} // max_concurrent_dispatches
	resumed chan struct{} // closed and replaced when a paused queue resumes
}

type task struct {
	pb      *pb.Task
	timer   *time.Timer
	running bool
	gone    bool
}

type server struct {
	pb.UnimplementedCloudTasksServer
	mu     sync.Mutex
	queues map[string]*queue
	used   map[string]bool // every task name ever created
	client *http.Client
}

func newServer() *server {
	return &server{
		queues: map[string]*queue{},
		used:   map[string]bool{},
		// Redirects are answers, not something to follow: the target decides what its 3xx means.
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
}

func withDefaults(q *pb.Queue) *pb.Queue {
	q = proto.Clone(q).(*pb.Queue)
	if q.RetryConfig == nil {
		q.RetryConfig = &pb.RetryConfig{}
	}
	rc := q.RetryConfig
	if rc.MaxAttempts == 0 {
		rc.MaxAttempts = 100
	}
	if rc.MinBackoff == nil {
		rc.MinBackoff = durationpb.New(100 * time.Millisecond)
	}
	if rc.MaxBackoff == nil {
		rc.MaxBackoff = durationpb.New(time.Hour)
	}
	if rc.MaxDoublings == 0 {
		rc.MaxDoublings = 16
	}
	if q.RateLimits == nil {
		q.RateLimits = &pb.RateLimits{}
	}
	if q.RateLimits.MaxConcurrentDispatches <= 0 {
		q.RateLimits.MaxConcurrentDispatches = 1000
	}
	if q.RateLimits.MaxDispatchesPerSecond <= 0 {
		q.RateLimits.MaxDispatchesPerSecond = 500
	}
	if q.State == pb.Queue_STATE_UNSPECIFIED {
		q.State = pb.Queue_RUNNING
	}
	return q
}

func (s *server) addQueue(q *pb.Queue) (*pb.Queue, error) {
	if !queueName.MatchString(q.GetName()) {
		return nil, status.Errorf(codes.InvalidArgument, "queue name %q is not projects/P/locations/L/queues/Q", q.GetName())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.queues[q.Name]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "queue %s already exists", q.Name)
	}
	q = withDefaults(q)
	s.queues[q.Name] = &queue{
		pb:      q,
		tasks:   map[string]*task{},
		slots:   make(chan struct{}, q.RateLimits.MaxConcurrentDispatches),
		resumed: make(chan struct{}),
	}
	return proto.Clone(q).(*pb.Queue), nil
}

func (s *server) CreateQueue(_ context.Context, req *pb.CreateQueueRequest) (*pb.Queue, error) {
	q := req.GetQueue()
	if q == nil {
		return nil, status.Error(codes.InvalidArgument, "queue is required")
	}
	if !strings.HasPrefix(q.GetName(), req.GetParent()+"/queues/") {
		return nil, status.Errorf(codes.InvalidArgument, "queue %q is not under %q", q.GetName(), req.GetParent())
	}
	return s.addQueue(q)
}

func (s *server) queue(name string) (*queue, error) {
	q, ok := s.queues[name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "queue %s not found", name)
	}
	return q, nil
}

func (s *server) GetQueue(_ context.Context, req *pb.GetQueueRequest) (*pb.Queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.queue(req.GetName())
	if err != nil {
		return nil, err
	}
	return proto.Clone(q.pb).(*pb.Queue), nil
}

func (s *server) ListQueues(_ context.Context, req *pb.ListQueuesRequest) (*pb.ListQueuesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &pb.ListQueuesResponse{}
	for name, q := range s.queues {
		if strings.HasPrefix(name, req.GetParent()+"/queues/") {
			out.Queues = append(out.Queues, proto.Clone(q.pb).(*pb.Queue))
		}
	}
	sort.Slice(out.Queues, func(i, j int) bool { return out.Queues[i].Name < out.Queues[j].Name })
	return out, nil
}

// stopAll cancels every pending task of q; the caller holds s.mu.
func stopAll(q *queue) {
	for name, t := range q.tasks {
		if t.timer != nil {
			t.timer.Stop()
		}
		t.gone = true
		delete(q.tasks, name)
	}
}

func (s *server) DeleteQueue(_ context.Context, req *pb.DeleteQueueRequest) (*emptypb.Empty, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.queue(req.GetName())
	if err != nil {
		return nil, err
	}
	stopAll(q)
	delete(s.queues, req.GetName())
	return &emptypb.Empty{}, nil
}

func (s *server) PurgeQueue(_ context.Context, req *pb.PurgeQueueRequest) (*pb.Queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.queue(req.GetName())
	if err != nil {
		return nil, err
	}
	stopAll(q)
	q.pb.PurgeTime = timestamppb.Now()
	return proto.Clone(q.pb).(*pb.Queue), nil
}

func (s *server) setState(name string, state pb.Queue_State) (*pb.Queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.queue(name)
	if err != nil {
		return nil, err
	}
	if q.pb.State == pb.Queue_PAUSED && state == pb.Queue_RUNNING {
		close(q.resumed)
		q.resumed = make(chan struct{})
	}
	q.pb.State = state
	return proto.Clone(q.pb).(*pb.Queue), nil
}

func (s *server) PauseQueue(_ context.Context, req *pb.PauseQueueRequest) (*pb.Queue, error) {
	return s.setState(req.GetName(), pb.Queue_PAUSED)
}

func (s *server) ResumeQueue(_ context.Context, req *pb.ResumeQueueRequest) (*pb.Queue, error) {
	return s.setState(req.GetName(), pb.Queue_RUNNING)
}

func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *server) CreateTask(_ context.Context, req *pb.CreateTaskRequest) (*pb.Task, error) {
	in := req.GetTask()
	if in == nil {
		return nil, status.Error(codes.InvalidArgument, "task is required")
	}
	hr := in.GetHttpRequest()
	if hr == nil {
		return nil, status.Error(codes.Unimplemented, "only HTTP target tasks are emulated")
	}
	if !strings.HasPrefix(hr.GetUrl(), "http://") && !strings.HasPrefix(hr.GetUrl(), "https://") {
		return nil, status.Errorf(codes.InvalidArgument, "url %q must begin with http:// or https://", hr.GetUrl())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.queue(req.GetParent())
	if err != nil {
		return nil, err
	}
	t := proto.Clone(in).(*pb.Task)
	if t.Name == "" {
		t.Name = req.GetParent() + "/tasks/" + randomID()
	} else {
		id, found := strings.CutPrefix(t.Name, req.GetParent()+"/tasks/")
		if !found || !taskID.MatchString(id) {
			return nil, status.Errorf(codes.InvalidArgument, "task name %q is not %s/tasks/ID", t.Name, req.GetParent())
		}
	}
	if s.used[t.Name] {
		return nil, status.Errorf(codes.AlreadyExists, "task %s already exists or existed recently", t.Name)
	}
	s.used[t.Name] = true
	now := time.Now()
	t.CreateTime = timestamppb.New(now)
	if t.ScheduleTime == nil || t.ScheduleTime.AsTime().Before(now) {
		t.ScheduleTime = timestamppb.New(now)
	}
	if t.DispatchDeadline == nil {
		t.DispatchDeadline = durationpb.New(defaultDeadline)
	}
	if t.GetHttpRequest().HttpMethod == pb.HttpMethod_HTTP_METHOD_UNSPECIFIED {
		t.GetHttpRequest().HttpMethod = pb.HttpMethod_POST
	}
	t.View = pb.Task_BASIC
	entry := &task{pb: t}
	q.tasks[t.Name] = entry
	s.schedule(q, entry, t.ScheduleTime.AsTime())
	return view(t, req.GetResponseView()), nil
}

// view drops the body in the BASIC view, as Cloud Tasks does.
func view(t *pb.Task, v pb.Task_View) *pb.Task {
	out := proto.Clone(t).(*pb.Task)
	if v != pb.Task_FULL {
		if hr := out.GetHttpRequest(); hr != nil {
			hr.Body = nil
		}
	} else {
		out.View = pb.Task_FULL
	}
	return out
}

func (s *server) task(name string) (*queue, *task, error) {
	i := strings.Index(name, "/tasks/")
	if i < 0 {
		return nil, nil, status.Errorf(codes.InvalidArgument, "task name %q has no /tasks/", name)
	}
	q, err := s.queue(name[:i])
	if err != nil {
		return nil, nil, err
	}
	t, ok := q.tasks[name]
	if !ok {
		return nil, nil, status.Errorf(codes.NotFound, "task %s not found", name)
	}
	return q, t, nil
}

func (s *server) GetTask(_ context.Context, req *pb.GetTaskRequest) (*pb.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, t, err := s.task(req.GetName())
	if err != nil {
		return nil, err
	}
	return view(t.pb, req.GetResponseView()), nil
}

func (s *server) ListTasks(_ context.Context, req *pb.ListTasksRequest) (*pb.ListTasksResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.queue(req.GetParent())
	if err != nil {
		return nil, err
	}
	out := &pb.ListTasksResponse{}
	for _, t := range q.tasks {
		out.Tasks = append(out.Tasks, view(t.pb, req.GetResponseView()))
	}
	sort.Slice(out.Tasks, func(i, j int) bool { return out.Tasks[i].Name < out.Tasks[j].Name })
	return out, nil
}

func (s *server) DeleteTask(_ context.Context, req *pb.DeleteTaskRequest) (*emptypb.Empty, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, t, err := s.task(req.GetName())
	if err != nil {
		return nil, err
	}
	if t.timer != nil {
		t.timer.Stop()
	}
	t.gone = true
	delete(q.tasks, t.pb.Name)
	return &emptypb.Empty{}, nil
}

func (s *server) RunTask(_ context.Context, req *pb.RunTaskRequest) (*pb.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, t, err := s.task(req.GetName())
	if err != nil {
		return nil, err
	}
	if !t.running {
		s.schedule(q, t, time.Now())
	}
	return view(t.pb, req.GetResponseView()), nil
}

// schedule arms t to dispatch at `at`; the caller holds s.mu.
func (s *server) schedule(q *queue, t *task, at time.Time) {
	if t.timer != nil {
		t.timer.Stop()
	}
	t.pb.ScheduleTime = timestamppb.New(at)
	t.timer = time.AfterFunc(time.Until(at), func() { s.dispatch(q, t) })
}

func (s *server) dispatch(q *queue, t *task) {
	s.mu.Lock()
	if t.gone || t.running {
		s.mu.Unlock()
		return
	}
	if q.pb.State == pb.Queue_PAUSED {
		resumed := q.resumed
		s.mu.Unlock()
		<-resumed
		s.dispatch(q, t)
		return
	}
	t.running = true
	snapshot := proto.Clone(t.pb).(*pb.Task)
	s.mu.Unlock()

	q.slots <- struct{}{}
	dispatched := time.Now()
	code, errText := s.send(q, snapshot)
	<-q.slots

	s.mu.Lock()
	defer s.mu.Unlock()
	t.running = false
	attempt := &pb.Attempt{
		ScheduleTime:   snapshot.ScheduleTime,
		DispatchTime:   timestamppb.New(dispatched),
		ResponseTime:   timestamppb.Now(),
		ResponseStatus: status.New(code, errText).Proto(),
	}
	t.pb.DispatchCount++
	if errText != "no response" {
		t.pb.ResponseCount++
	}
	if t.pb.FirstAttempt == nil {
		t.pb.FirstAttempt = attempt
	}
	t.pb.LastAttempt = attempt
	if t.gone {
		return
	}
	rc := q.pb.RetryConfig
	if code == codes.OK || (rc.MaxAttempts >= 0 && t.pb.DispatchCount >= rc.MaxAttempts) {
		t.gone = true
		delete(q.tasks, t.pb.Name)
		return
	}
	s.schedule(q, t, time.Now().Add(backoff(rc, int(t.pb.DispatchCount))))
}

// backoff after the n-th failed dispatch: min_backoff doubled (n-1) times, at most max_doublings
// times, then growing linearly by the last doubled step, capped at max_backoff.
func backoff(rc *pb.RetryConfig, n int) time.Duration {
	minB, maxB := rc.MinBackoff.AsDuration(), rc.MaxBackoff.AsDuration()
	doublings := min(n-1, int(rc.MaxDoublings))
	d := minB << doublings
	if extra := n - 1 - doublings; extra > 0 {
		d += time.Duration(extra) * (minB << max(doublings-1, 0))
	}
	if d <= 0 || d > maxB {
		return maxB
	}
	return d
}

// send makes one HTTP attempt: OK for a 2xx, otherwise a code and what went wrong.
func (s *server) send(q *queue, t *pb.Task) (codes.Code, string) {
	hr := t.GetHttpRequest()
	ctx, cancel := context.WithTimeout(context.Background(), t.DispatchDeadline.AsDuration())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, hr.HttpMethod.String(), hr.Url, bytes.NewReader(hr.Body))
	if err != nil {
		return codes.InvalidArgument, err.Error()
	}
	for k, v := range hr.Headers {
		req.Header.Set(k, v)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "Google-Cloud-Tasks")
	}
	_, queueID, _ := strings.Cut(q.pb.Name, "/queues/")
	_, id, _ := strings.Cut(t.Name, "/tasks/")
	req.Header.Set("X-CloudTasks-QueueName", queueID)
	req.Header.Set("X-CloudTasks-TaskName", id)
	req.Header.Set("X-CloudTasks-TaskRetryCount", strconv.Itoa(int(t.DispatchCount)))
	req.Header.Set("X-CloudTasks-TaskExecutionCount", strconv.Itoa(int(t.ResponseCount)))
	req.Header.Set("X-CloudTasks-TaskETA", strconv.FormatFloat(float64(t.ScheduleTime.AsTime().UnixNano())/1e9, 'f', 6, 64))
	res, err := s.client.Do(req)
	if err != nil {
		return codes.Unavailable, "no response"
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
	_ = res.Body.Close()
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		return codes.OK, ""
	}
	return codes.Unknown, fmt.Sprintf("HTTP %d", res.StatusCode)
}

type queueFlags []string

func (f *queueFlags) String() string     { return strings.Join(*f, ",") }
func (f *queueFlags) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 8123, "port to listen on (0: any free port)")
	var initial queueFlags
	flag.Var(&initial, "initial-queue", "a queue to create at start, projects/P/locations/L/queues/Q (repeatable)")
	flag.Parse()

	srv := newServer()
	for _, name := range initial {
		if _, err := srv.addQueue(&pb.Queue{Name: name}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	g := grpc.NewServer()
	pb.RegisterCloudTasksServer(g, srv)
	go func() {
		if err := g.Serve(lis); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}()
	fmt.Printf("listening on %s\n", lis.Addr())

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	g.Stop()
}
