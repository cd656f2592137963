export {
  createSmtpEmailSender,
  type SmtpEmailSender,
  type SmtpEmailSenderOptions,
} from './create-smtp-email-sender.js';
