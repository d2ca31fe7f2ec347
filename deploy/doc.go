// Package deploy holds the deployment files of the org-wide service (the
// load balancer's nginx.conf for docker-compose.yml) and the tests that
// keep docker-compose.yml, the Dockerfile and nginx.conf consistent with
// each other and with the binaries' settings. Docker does not run on the
// build machines, so these files are checked by reading them: the compose
// file is parsed and its environment is loaded through the mirror's own
// configuration, and nginx.conf is checked with `nginx -t`.
package deploy
