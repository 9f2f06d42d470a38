// manifestcheck validates Dripline's deployment files offline, without a cluster or a Docker
// engine: Kubernetes manifests (rendered by `kubectl kustomize`, read from stdin with -k8s) are
// strictly decoded into the typed client-go API structs, so unknown or misspelt fields and wrong
// types fail; a Compose file (-compose FILE) is loaded and validated by compose-go, the library
// `docker compose config` uses.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

func main() {
	k8s := flag.Bool("k8s", false, "validate a multi-document Kubernetes YAML stream from stdin")
	compose := flag.String("compose", "", "validate this Compose file")
	flag.Parse()
	switch {
	case *k8s:
		os.Exit(checkKubernetes(os.Stdin))
	case *compose != "":
		os.Exit(checkCompose(*compose))
	default:
		flag.Usage()
		os.Exit(2)
	}
}

// Kinds of CRDs we ship; strict typing is not available for them, only basic shape.
var crdKinds = map[string]bool{"ServiceMonitor": true, "PrometheusRule": true}

func checkKubernetes(in io.Reader) int {
	data, err := io.ReadAll(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	codecs := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict)
	decoder := codecs.UniversalDeserializer()
	failures, count := 0, 0
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		count++
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			fmt.Printf("FAIL document %d: %v\n", count, err)
			failures++
			continue
		}
		id := meta.Kind + "/" + meta.Metadata.Name
		if errs := validation.IsDNS1123Subdomain(meta.Metadata.Name); len(errs) > 0 {
			fmt.Printf("FAIL %s: name: %s\n", id, strings.Join(errs, "; "))
			failures++
		}
		if crdKinds[meta.Kind] {
			fmt.Printf("ok   %s (custom resource: shape only)\n", id)
			continue
		}
		json, err := yaml.YAMLToJSON(doc)
		if err != nil {
			fmt.Printf("FAIL %s: %v\n", id, err)
			failures++
			continue
		}
		var obj runtime.Object
		if obj, _, err = decoder.Decode(json, nil, nil); err != nil {
			fmt.Printf("FAIL %s: %v\n", id, err)
			failures++
			continue
		}
		fmt.Printf("ok   %s (%T)\n", id, obj)
	}
	fmt.Printf("%d documents, %d failed\n", count, failures)
	if failures > 0 || count == 0 {
		return 1
	}
	return 0
}

func checkCompose(file string) int {
	abs, err := filepath.Abs(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	options, err := cli.NewProjectOptions([]string{abs},
		cli.WithWorkingDirectory(filepath.Dir(abs)), cli.WithOsEnv, cli.WithName("dripline"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	project, err := options.LoadProject(context.Background())
	if err != nil {
		fmt.Printf("FAIL %s: %v\n", file, err)
		return 1
	}
	for _, name := range project.ServiceNames() {
		fmt.Printf("ok   service %s\n", name)
	}
	fmt.Printf("compose project %q: %d services valid\n", project.Name, len(project.Services))
	return 0
}
